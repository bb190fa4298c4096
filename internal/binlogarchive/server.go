package binlogarchive

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// Server is the archiver's view of mysqld, over a root connection pool.
type Server struct {
	DB *sql.DB
}

// listedBinlog is one row of SHOW BINARY LOGS.
type listedBinlog = mysql.BinaryLog

// BinaryLogs lists the binary logs, oldest first; the last is the open one.
func (s Server) BinaryLogs(ctx context.Context) ([]listedBinlog, error) {
	return mysql.ListBinaryLogs(ctx, s.DB)
}

// PreviousGTIDs returns a binlog's Previous_gtids (its second event).
func (s Server) PreviousGTIDs(ctx context.Context, file string) (gtid.Set, error) {
	rows, err := s.DB.QueryContext(ctx, "SHOW BINLOG EVENTS IN "+quote(file)+" LIMIT 2")
	if err != nil {
		return gtid.Set{}, fmt.Errorf("reading the Previous_gtids of %s: %w", file, err)
	}
	defer rows.Close()
	for rows.Next() {
		var logName, eventType, info string
		var pos, serverID, end int64
		if err := rows.Scan(&logName, &pos, &eventType, &serverID, &end, &info); err != nil {
			return gtid.Set{}, fmt.Errorf("reading the Previous_gtids of %s: %w", file, err)
		}
		if eventType == "Previous_gtids" {
			return gtid.Parse(info)
		}
	}
	if err := rows.Err(); err != nil {
		return gtid.Set{}, err
	}
	return gtid.Set{}, fmt.Errorf("%s has no Previous_gtids event", file)
}

// Identity returns @@server_uuid, @@gtid_executed and whether the server is writable.
func (s Server) Identity(ctx context.Context) (string, gtid.Set, bool, error) {
	var uuid, executed string
	var readOnly, superReadOnly bool
	err := s.DB.QueryRowContext(ctx, "SELECT @@server_uuid, @@global.gtid_executed, @@global.read_only, @@global.super_read_only").
		Scan(&uuid, &executed, &readOnly, &superReadOnly)
	if err != nil {
		return "", gtid.Set{}, false, fmt.Errorf("reading the server's identity: %w", err)
	}
	set, err := gtid.Parse(executed)
	return uuid, set, !readOnly && !superReadOnly, err
}

// ExpireSeconds returns @@binlog_expire_logs_seconds.
func (s Server) ExpireSeconds(ctx context.Context) (int64, error) {
	var v int64
	err := s.DB.QueryRowContext(ctx, "SELECT @@global.binlog_expire_logs_seconds").Scan(&v)
	return v, err
}

// DisableAutoPurge stops mysqld from purging binary logs on its own
// (binlog_expire_logs_auto_purge=OFF): from then on only the archiver purges, and only what is
// archived. binlog_expire_logs_seconds keeps its value and becomes how long the archiver keeps an
// archived binlog.
func (s Server) DisableAutoPurge(ctx context.Context) error {
	if _, err := s.DB.ExecContext(ctx, "SET GLOBAL binlog_expire_logs_auto_purge = OFF"); err != nil {
		return fmt.Errorf("turning binlog_expire_logs_auto_purge off: %w", err)
	}
	return nil
}

// EnableAutoPurge gives purging back to mysqld, on an instance that stopped being the primary.
func (s Server) EnableAutoPurge(ctx context.Context) error {
	if _, err := s.DB.ExecContext(ctx, "SET GLOBAL binlog_expire_logs_auto_purge = ON"); err != nil {
		return fmt.Errorf("turning binlog_expire_logs_auto_purge on: %w", err)
	}
	return nil
}

// Rotate closes the open binlog and opens the next (FLUSH BINARY LOGS).
func (s Server) Rotate(ctx context.Context) error {
	if _, err := s.DB.ExecContext(ctx, "FLUSH BINARY LOGS"); err != nil {
		return fmt.Errorf("rotating the binary log: %w", err)
	}
	return nil
}

// PurgeTo deletes the binary logs before file.
func (s Server) PurgeTo(ctx context.Context, file string) error {
	if _, err := s.DB.ExecContext(ctx, "PURGE BINARY LOGS TO "+quote(file)); err != nil {
		return fmt.Errorf("purging the binary logs before %s: %w", file, err)
	}
	return nil
}

// quote renders a binlog file name as an SQL string literal; SHOW BINLOG EVENTS IN and PURGE
// BINARY LOGS TO take no placeholders. File names come from SHOW BINARY LOGS.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}
