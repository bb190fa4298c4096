package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
)

// unloggedSession runs fn on one session of o's pool with the binary log off (sql_log_bin=0),
// then discards that session rather than give it back to the pool: a pooled session that kept
// sql_log_bin=0 would leave every later statement that happens to run on it out of the binary
// log, so out of the replicas and of point-in-time recovery.
func (o *operator) unloggedSession(ctx context.Context, fn func(*sql.Conn) error) error {
	conn, err := o.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", o.addr, err)
	}
	defer discardSession(conn)
	if _, err := conn.ExecContext(ctx, "SET SESSION sql_log_bin = 0"); err != nil {
		return fmt.Errorf("turning the binary log off for the session on %s: %w", o.addr, err)
	}
	return fn(conn)
}

// discardSession closes conn's session for good: database/sql drops a connection whose Raw
// callback returns driver.ErrBadConn instead of pooling it.
func discardSession(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}

// BootstrapAccounts creates the application database and owner (when app is not nil), then the
// operator's accounts (the clone donor account last), on a first primary (a new data directory,
// or one restored from a backup) before any replica follows it, on one session with the binary
// log off. No replica or backup can exist before the clone donor account does, and
// every replica and backup starts from a clone, so each gets them with the data: nothing is
// missing from any instance's history. Binary-logged, each statement's commit would wait for a
// semi-sync acknowledgement no replica can send yet, and, holding the account lock while it
// waits, would keep the first replica from even logging in to clone. Idempotent, like
// CreateApplication and CreateUsers.
func (o *operator) BootstrapAccounts(ctx context.Context, app *Application, users Users) error {
	return o.unloggedSession(ctx, func(conn *sql.Conn) error {
		if app != nil {
			if err := o.createApplication(ctx, conn, *app); err != nil {
				return err
			}
		}
		return o.createUsers(ctx, conn, users)
	})
}
