package mysql_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

func TestClientSession(t *testing.T) {
	for _, tc := range []struct {
		name                string
		user, host, command string
		want                bool
	}{
		{"an application session", "app", "10.0.0.7:53211", "Query", true},
		{"an idle application session", "app", "10.0.0.7:53211", "Sleep", true},
		{"root over TCP", "root", "10.0.0.7:53211", "Sleep", true},
		{"the instance manager over the local socket", "root", "localhost", "Query", false},
		{"a replica's dump thread", "replication", "10.0.0.8:40000", "Binlog Dump GTID", false},
		{"an old-style dump thread", "replication", "10.0.0.8:40000", "Binlog Dump", false},
		{"the server's own threads", "system user", "", "Connect", false},
		{"the event scheduler", "event_scheduler", "localhost", "Daemon", false},
		{"an unauthenticated connection", "", "10.0.0.7:1", "Connect", false},
		{"a session already killed", "app", "10.0.0.7:1", "Killed", false},
	} {
		if got := mysql.ClientSession(tc.user, tc.host, tc.command); got != tc.want {
			t.Errorf("%s: ClientSession = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestKillClientSessions: on a read-only server, a session that wrote and has not committed can
// no longer commit once the client sessions are ended.
func TestKillClientSessions(t *testing.T) {
	n := startNodes(t, 1)[0]
	n.exec(t, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)",
		"CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'", "GRANT ALL ON app.* TO 'app'@'%'")
	app, err := sql.Open("mysql", n.srv.MySQLConfig("app", "app-pw", "").FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	tx, err := app.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO app.t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if err := n.op.SetReadOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	killed, err := n.op.KillClientSessions(ctx)
	if err != nil || killed < 1 {
		t.Fatalf("KillClientSessions = %d, %v; want the application's session ended", killed, err)
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("the open transaction committed after the server turned read-only and ended the sessions")
	}
	if err := n.op.SetReadOnly(ctx, false); err != nil { // the caller's connections survive
		t.Fatal(err)
	}
	var rows int
	if err := n.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.t").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("rows = %d, %v; want the uncommitted row gone", rows, err)
	}
}

// TestEndSessionsWhileReadOnly: on a read-only server the client sessions end except those of
// the accounts kept; on a writable one nothing ends and the call says it is writable.
func TestEndSessionsWhileReadOnly(t *testing.T) {
	n := startNodes(t, 1)[0]
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	n.exec(t, "CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'", "CREATE USER 'kept'@'%' IDENTIFIED BY 'kept-pw'")
	session := func(user, password string) *sql.Conn {
		t.Helper()
		db, err := sql.Open("mysql", n.srv.MySQLConfig(user, password, "").FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	alive := func(c *sql.Conn) bool { _, err := c.ExecContext(ctx, "SELECT 1"); return err == nil }
	app, kept := session("app", "app-pw"), session("kept", "kept-pw")
	if ended, writable, err := n.op.EndSessionsWhileReadOnly(ctx, []string{"kept"}); err != nil || !writable || ended != 0 {
		t.Fatalf("on a writable server: ended %d, writable %v, %v; want nothing ended, writable", ended, writable, err)
	}
	if !alive(app) {
		t.Fatal("a session of a writable server was ended")
	}
	if err := n.op.SetReadOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	ended, writable, err := n.op.EndSessionsWhileReadOnly(ctx, []string{"kept"})
	if err != nil || writable || ended < 1 {
		t.Fatalf("on a read-only server: ended %d, writable %v, %v; want the application's session ended", ended, writable, err)
	}
	if alive(app) {
		t.Error("the application's session survived")
	}
	if !alive(kept) {
		t.Error("the session of a kept account was ended")
	}
	if err := n.op.SetReadOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
}
