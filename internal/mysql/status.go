package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// Status is a snapshot of one server.
type Status struct {
	ServerUUID   string
	GTIDExecuted gtid.Set
	// GTIDInFlight are the GTIDs of its own server UUID that its sessions own but have not
	// committed yet (@@GLOBAL.gtid_owned), read before GTIDExecuted. A commit that waits for its semi-sync
	// acknowledgement (the AFTER_SYNC wait point) is among them: it is in the binary log, and
	// perhaps on a replica already, but not yet in gtid_executed. Because GTIDInFlight is read
	// first, a transaction this server had written to its binary log before the read is in one
	// of the two sets.
	GTIDInFlight gtid.Set
	// ReadOnly and SuperReadOnly are the flags in effect (see readOnlyInEffect): a SET GLOBAL
	// super_read_only = ON still waiting for the commits in flight leaves both false.
	ReadOnly      bool
	SuperReadOnly bool
	// Replication is nil when no replication source is configured.
	Replication *ReplicationStatus
	SemiSync    SemiSyncStatus
}

// Writable reports whether the server accepts writes from ordinary clients.
func (s *Status) Writable() bool { return !s.ReadOnly && !s.SuperReadOnly }

// ReplicationStatus is the replica side of SHOW REPLICA STATUS.
type ReplicationStatus struct {
	SourceHost   string
	SourcePort   int
	AutoPosition bool
	// IORunning and SQLRunning are "Yes", "No" or "Connecting" (IO only).
	IORunning    string
	SQLRunning   string
	LastIOErrno  int
	LastIOError  string
	LastSQLErrno int
	LastSQLError string
	// SecondsBehindSource is nil when MySQL reports NULL (a thread is stopped or not connected).
	SecondsBehindSource *int64
	RetrievedGTIDSet    gtid.Set
}

// Healthy reports whether both threads run and neither reports an error.
func (r *ReplicationStatus) Healthy() bool {
	return r.IORunning == "Yes" && r.SQLRunning == "Yes" && r.LastIOErrno == 0 && r.LastSQLErrno == 0
}

// SemiSyncStatus is the semi-sync plugins' variables and status counters; fields of a plugin that
// is not installed are zero.
type SemiSyncStatus struct {
	SourcePluginInstalled  bool
	ReplicaPluginInstalled bool
	SourceEnabled          bool // rpl_semi_sync_source_enabled
	ReplicaEnabled         bool // rpl_semi_sync_replica_enabled
	WaitForReplicaCount    int  // rpl_semi_sync_source_wait_for_replica_count
	Timeout                time.Duration
	WaitPoint              string // rpl_semi_sync_source_wait_point
	WaitNoReplica          bool   // rpl_semi_sync_source_wait_no_replica
	// SourceActive is Rpl_semi_sync_source_status: false while semi-sync is enabled means the
	// source has fallen back to asynchronous replication.
	SourceActive  bool
	ReplicaActive bool  // Rpl_semi_sync_replica_status
	Clients       int64 // Rpl_semi_sync_source_clients
	YesTx         int64 // Rpl_semi_sync_source_yes_tx: commits acknowledged by replicas
	NoTx          int64 // Rpl_semi_sync_source_no_tx: commits not acknowledged in time
	// AckWaiters is the number of sessions whose commit waits for a semi-sync acknowledgement
	// (processlist state "Waiting for semi-sync ACK from replica"): with the AFTER_SYNC wait
	// point their transaction is in the binary log, and perhaps on a replica, but not yet in
	// gtid_executed. LongestAckWait is how long the oldest of them has waited (whole seconds,
	// as the processlist counts).
	AckWaiters     int
	LongestAckWait time.Duration
	// Dumps is the number of binary log dump threads (replicas connected to this server, semi-sync
	// or not); CaughtUpDumps how many of them have sent the whole binary log and wait for more
	// (processlist state "Source has sent all binlog to replica; ..."): their replica has received
	// everything this server wrote, or is about to.
	Dumps         int
	CaughtUpDumps int
}

// caughtUpDumpState matches the processlist state of a dump thread that has sent the whole binary
// log ("Source has sent all binlog to replica; waiting for more updates"; "Master ... slave"
// before 8.0.26).
const caughtUpDumpState = "% has sent all binlog to %"

// ackWaitState matches the processlist state of a session whose commit waits for a semi-sync
// acknowledgement ("Waiting for semi-sync ACK from replica"; "slave" before 8.0.26).
const ackWaitState = "Waiting for semi-sync ACK from %"

// processlistCounts are what ackWaits reads from the processlist in one query.
type processlistCounts struct {
	waiters       int
	longest       time.Duration
	dumps         int
	caughtUpDumps int
}

// ackWaits counts the sessions waiting for a semi-sync acknowledgement and the longest wait, and
// the dump threads and those that have sent everything. information_schema.processlist is read,
// not performance_schema, which may be off; it does not wait behind a commit.
func (o *operator) ackWaits(ctx context.Context) (processlistCounts, error) {
	var n, longest, dumps, caughtUp int64
	err := o.db.QueryRowContext(ctx,
		"SELECT COALESCE(SUM(state LIKE ?), 0), COALESCE(MAX(IF(state LIKE ?, time, 0)), 0), "+
			"COALESCE(SUM(command LIKE 'Binlog Dump%'), 0), "+
			"COALESCE(SUM(command LIKE 'Binlog Dump%' AND state LIKE ?), 0) FROM information_schema.processlist",
		ackWaitState, ackWaitState, caughtUpDumpState).
		Scan(&n, &longest, &dumps, &caughtUp)
	if err != nil {
		return processlistCounts{}, fmt.Errorf("counting the commits waiting for a semi-sync acknowledgement on %s: %w", o.addr, err)
	}
	return processlistCounts{waiters: int(n), longest: time.Duration(longest) * time.Second,
		dumps: int(dumps), caughtUpDumps: int(caughtUp)}, nil
}

func (o *operator) Status(ctx context.Context) (*Status, error) {
	st, err := o.status(ctx)
	if errors.Is(err, driver.ErrInvalidConn) {
		// A pooled session the server closed under the query (it was ended, or the server
		// restarted): the reads change nothing, so they are made once more on another session
		// rather than reported as an instance that does not answer, which can abort a switchover.
		st, err = o.status(ctx)
	}
	return st, err
}

func (o *operator) status(ctx context.Context) (*Status, error) {
	st := &Status{}
	var owned string
	if err := o.db.QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_owned").Scan(&owned); err != nil {
		return nil, fmt.Errorf("reading gtid_owned of %s: %w", o.addr, err)
	}
	var executed string
	err := o.db.QueryRowContext(ctx,
		"SELECT @@server_uuid, @@GLOBAL.gtid_executed, @@GLOBAL.read_only, @@GLOBAL.super_read_only").
		Scan(&st.ServerUUID, &executed, &st.ReadOnly, &st.SuperReadOnly)
	if err != nil {
		return nil, fmt.Errorf("reading the server variables of %s: %w", o.addr, err)
	}
	st.ReadOnly, st.SuperReadOnly = readOnlyInEffect(st.ReadOnly, st.SuperReadOnly)
	st.GTIDInFlight = ownedOf(owned, st.ServerUUID)
	if st.GTIDExecuted, err = gtid.Parse(executed); err != nil {
		return nil, fmt.Errorf("gtid_executed of %s: %w", o.addr, err)
	}
	if st.Replication, err = o.replicationStatus(ctx); err != nil {
		return nil, err
	}
	if st.SemiSync, err = o.semiSyncStatus(ctx); err != nil {
		return nil, err
	}
	return st, nil
}

// readOnlyInEffect returns the read-only flags that are in effect, from @@GLOBAL.read_only and
// @@GLOBAL.super_read_only. SET GLOBAL super_read_only = ON on a writable server shows
// @@super_read_only = 1 at once, then waits for the commits in flight (a commit waiting for its
// semi-sync acknowledgement among them) and only then turns read_only on; until it does, the
// server still commits and its gtid_executed still grows. super_read_only is in effect only
// with read_only, which MySQL turns on with it and never leaves off under it.
func readOnlyInEffect(readOnly, superReadOnly bool) (ro, superRO bool) {
	return readOnly, superReadOnly && readOnly
}

// replicationStatus reads SHOW REPLICA STATUS (it needs no performance_schema).
func (o *operator) replicationStatus(ctx context.Context) (*ReplicationStatus, error) {
	row, err := o.queryRow(ctx, "SHOW REPLICA STATUS")
	if err != nil || row == nil {
		return nil, err
	}
	r := &ReplicationStatus{
		SourceHost:   row["Source_Host"],
		SourcePort:   atoi(row["Source_Port"]),
		AutoPosition: row["Auto_Position"] == "1",
		IORunning:    row["Replica_IO_Running"],
		SQLRunning:   row["Replica_SQL_Running"],
		LastIOErrno:  atoi(row["Last_IO_Errno"]),
		LastIOError:  row["Last_IO_Error"],
		LastSQLErrno: atoi(row["Last_SQL_Errno"]),
		LastSQLError: row["Last_SQL_Error"],
	}
	if v, ok := row["Seconds_Behind_Source"]; ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil {
			r.SecondsBehindSource = &n
		}
	}
	if r.RetrievedGTIDSet, err = gtid.Parse(row["Retrieved_Gtid_Set"]); err != nil {
		return nil, fmt.Errorf("Retrieved_Gtid_Set of %s: %w", o.addr, err)
	}
	return r, nil
}

// semiSyncStatus reads the plugins' variables and counters; absent plugins read as zero. The
// variables are read with SELECT @@GLOBAL, not SHOW VARIABLES: SHOW VARIABLES waits while an
// account statement's commit waits for an acknowledgement, and the semi-sync fallback must read
// this to release it (TestAccountStatementWaitBlocksLogins). A plugin is loaded when its status
// counters exist.
func (o *operator) semiSyncStatus(ctx context.Context) (SemiSyncStatus, error) {
	status, err := o.queryPairs(ctx, "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_%'")
	if err != nil {
		return SemiSyncStatus{}, err
	}
	_, sourceLoaded := status["Rpl_semi_sync_source_status"]
	_, replicaLoaded := status["Rpl_semi_sync_replica_status"]
	s := SemiSyncStatus{
		SourcePluginInstalled:  sourceLoaded,
		ReplicaPluginInstalled: replicaLoaded,
		SourceActive:           status["Rpl_semi_sync_source_status"] == "ON",
		ReplicaActive:          status["Rpl_semi_sync_replica_status"] == "ON",
		Clients:                int64(atoi(status["Rpl_semi_sync_source_clients"])),
		YesTx:                  int64(atoi(status["Rpl_semi_sync_source_yes_tx"])),
		NoTx:                   int64(atoi(status["Rpl_semi_sync_source_no_tx"])),
	}
	if sourceLoaded {
		var timeout int64
		err := o.db.QueryRowContext(ctx, "SELECT @@GLOBAL.rpl_semi_sync_source_enabled, @@GLOBAL.rpl_semi_sync_source_wait_for_replica_count, "+
			"@@GLOBAL.rpl_semi_sync_source_timeout, @@GLOBAL.rpl_semi_sync_source_wait_point, @@GLOBAL.rpl_semi_sync_source_wait_no_replica").
			Scan(&s.SourceEnabled, &s.WaitForReplicaCount, &timeout, &s.WaitPoint, &s.WaitNoReplica)
		if err != nil {
			return SemiSyncStatus{}, fmt.Errorf("reading the semi-sync source variables of %s: %w", o.addr, err)
		}
		s.Timeout = time.Duration(timeout) * time.Millisecond
		pl, err := o.ackWaits(ctx)
		if err != nil {
			return SemiSyncStatus{}, err
		}
		s.AckWaiters, s.LongestAckWait, s.Dumps, s.CaughtUpDumps = pl.waiters, pl.longest, pl.dumps, pl.caughtUpDumps
	}
	if replicaLoaded {
		if err := o.db.QueryRowContext(ctx, "SELECT @@GLOBAL.rpl_semi_sync_replica_enabled").Scan(&s.ReplicaEnabled); err != nil {
			return SemiSyncStatus{}, fmt.Errorf("reading the semi-sync replica variables of %s: %w", o.addr, err)
		}
	}
	return s, nil
}

// queryPairs reads a two-column name/value result, as SHOW VARIABLES and SHOW STATUS return.
func (o *operator) queryPairs(ctx context.Context, query string) (map[string]string, error) {
	rows, err := o.db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", query, o.addr, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return nil, fmt.Errorf("%s on %s: %w", query, o.addr, err)
		}
		out[name.String] = value.String
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s on %s: %w", query, o.addr, err)
	}
	return out, nil
}

// queryRow reads the first row of query as column name to text; nil when there is no row.
func (o *operator) queryRow(ctx context.Context, query string) (map[string]string, error) {
	rows, err := o.db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", query, o.addr, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", query, o.addr, err)
	}
	if !rows.Next() {
		return nil, rows.Err()
	}
	values := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range values {
		ptrs[i] = &values[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("%s on %s: %w", query, o.addr, err)
	}
	out := make(map[string]string, len(cols))
	for i, c := range cols {
		out[c] = strings.TrimSpace(values[i].String)
	}
	return out, nil
}

// atoi parses a decimal integer, 0 when it does not parse (absent or NULL values).
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
