package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
)

// KillClientSessions ends every client session except the server's own threads, the
// replication dump threads and the instance manager's root@localhost sessions. Called once the
// server is read-only, it makes sure no transaction opened before can still commit.
func (o *operator) KillClientSessions(ctx context.Context) (int, error) {
	conn, err := o.db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("connecting to %s: %w", o.addr, err)
	}
	defer conn.Close()
	var self int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&self); err != nil {
		return 0, fmt.Errorf("reading the connection id on %s: %w", o.addr, err)
	}
	killed, err := endSessions(ctx, conn, self, ClientSession)
	if err != nil {
		return killed, fmt.Errorf("ending the client sessions of %s: %w", o.addr, err)
	}
	return killed, nil
}

// EndSessionsWhileReadOnly: see Operator. The read-only check and the KILLs share one session.
func (o *operator) EndSessionsWhileReadOnly(ctx context.Context, keep []string) (int, bool, error) {
	conn, err := o.db.Conn(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("connecting to %s: %w", o.addr, err)
	}
	defer conn.Close()
	var self int64
	var superReadOnly bool
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID(), @@global.super_read_only").Scan(&self, &superReadOnly); err != nil {
		return 0, false, fmt.Errorf("reading the connection id and super_read_only on %s: %w", o.addr, err)
	}
	if !superReadOnly {
		return 0, true, nil
	}
	ended, err := endSessions(ctx, conn, self, func(user, host, command string) bool {
		return ClientSession(user, host, command) && !slices.Contains(keep, user)
	})
	if err != nil {
		return ended, false, fmt.Errorf("ending the client sessions of %s: %w", o.addr, err)
	}
	return ended, false, nil
}

// endSessions ends the sessions selects selects, except self, and returns how many it ended.
func endSessions(ctx context.Context, conn *sql.Conn, self int64, selects func(user, host, command string) bool) (int, error) {
	ids, err := sessionsWhere(ctx, conn, self, selects)
	if err != nil {
		return 0, fmt.Errorf("listing the sessions: %w", err)
	}
	ended := 0
	for _, id := range ids {
		// The id is a number the server gave; KILL takes no placeholder.
		_, err := conn.ExecContext(ctx, "KILL CONNECTION "+strconv.FormatInt(id, 10))
		if err != nil && mysqlErrorNumber(err) != errNoSuchThread { // else it ended meanwhile
			return ended, fmt.Errorf("ending session %d: %w", id, err)
		}
		if err == nil {
			ended++
		}
	}
	return ended, nil
}

// sessionsWhere lists the ids of the sessions selects selects, except self.
func sessionsWhere(ctx context.Context, conn *sql.Conn, self int64, selects func(user, host, command string) bool) ([]int64, error) {
	rows, err := conn.QueryContext(ctx, "SHOW PROCESSLIST")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(nullString)
		}
		if err := rows.Scan(vals...); err != nil {
			return nil, err
		}
		row := map[string]string{}
		for i, c := range cols {
			row[c] = vals[i].(*nullString).String
		}
		id, err := strconv.ParseInt(row["Id"], 10, 64)
		if err == nil && id != self && selects(row["User"], row["Host"], row["Command"]) {
			ids = append(ids, id)
		}
	}
	return ids, rows.Err()
}

// errNoSuchThread is ER_NO_SUCH_THREAD: the session ended before KILL reached it.
const errNoSuchThread = 1094

// ClientSession tells a client session from the sessions KillClientSessions keeps: the server's
// own threads, replication to the replicas (whose dump threads also carry the semi-sync
// acknowledgements), and root@localhost, which with skip_name_resolve only the local socket
// reaches, so only the instance manager.
func ClientSession(user, host, command string) bool {
	switch {
	case user == "system user" || user == "event_scheduler" || user == "":
		return false
	case command == "Daemon" || command == "Binlog Dump" || command == "Binlog Dump GTID" || command == "Killed":
		return false
	case user == "root" && host == "localhost":
		return false
	}
	return true
}

// nullString scans any column as text, NULL as "".
type nullString struct{ String string }

func (n *nullString) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		n.String = ""
	case []byte:
		n.String = string(x)
	case string:
		n.String = x
	default:
		n.String = fmt.Sprint(x)
	}
	return nil
}
