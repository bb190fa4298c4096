package mysql_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestAccountStatementWaitBlocksLogins documents what the instance manager's semi-sync fallback
// must live with: an account statement (CREATE USER, ALTER USER, GRANT) whose commit waits for a
// semi-sync acknowledgement holds the server's account cache, so no new session can log in until
// the wait ends, while a session opened before runs statements and can switch the source off.
func TestAccountStatementWaitBlocksLogins(t *testing.T) {
	n := startNodes(t, 1)[0]
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	check.Must(t, n.op.InstallSemiSyncPlugins(ctx))
	kept, err := n.db.Conn(ctx)
	check.Must(t, err)
	defer kept.Close()
	check.Must(t, n.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 1, Timeout: mysql.SourceTimeoutNever}))
	t.Cleanup(func() { _ = n.op.SetSemiSyncSourceEnabled(context.Background(), false) })
	waiting := make(chan error, 1)
	go func() {
		_, err := n.db.ExecContext(context.WithoutCancel(ctx), "CREATE USER 'blocked'@'%' IDENTIFIED BY 'x-pw'")
		waiting <- err
	}()
	var ackWaiters string
	check.Eventually(t, 10*time.Second, "the account statement waiting for an acknowledgement", check.True(func() bool {
		var name string
		return kept.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_source_wait_sessions'").Scan(&name, &ackWaiters) == nil && ackWaiters == "1"
	}))
	var state, info string
	check.Must(t, kept.QueryRowContext(ctx, "SELECT COALESCE(state, ''), COALESCE(info, '') FROM information_schema.processlist WHERE info LIKE 'CREATE USER%'").Scan(&state, &info))
	t.Logf("the waiting account statement's state: %q", state)
	fresh, err := sql.Open("mysql", n.srv.MySQLConfig("root", "", "").FormatDSN())
	check.Must(t, err)
	defer fresh.Close()
	loginCtx, loginCancel := context.WithTimeout(ctx, 3*time.Second)
	err = fresh.PingContext(loginCtx)
	loginCancel()
	if err == nil {
		t.Error("a new login succeeded while an account statement waited for an acknowledgement; NewKeptLocalAdmin's reason is gone")
	}
	// What the fallback reads works on the open session; SHOW VARIABLES waits too.
	probe := func(q string) error {
		qctx, qcancel := context.WithTimeout(ctx, 2*time.Second)
		defer qcancel()
		rows, err := kept.QueryContext(qctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
		}
		return rows.Err()
	}
	for _, q := range []string{"SELECT @@GLOBAL.rpl_semi_sync_source_enabled, @@GLOBAL.rpl_semi_sync_source_wait_for_replica_count, @@GLOBAL.read_only, @@GLOBAL.super_read_only",
		"SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_source_%'", "SELECT COUNT(*) FROM information_schema.processlist"} {
		if err := probe(q); err != nil {
			t.Errorf("%s on the open session while the account statement waits: %v", q, err)
		}
	}
	var one int
	check.Must(t, kept.QueryRowContext(ctx, "SELECT 1").Scan(&one))
	if _, err := kept.ExecContext(ctx, "SET GLOBAL rpl_semi_sync_source_enabled = OFF"); err != nil {
		t.Fatalf("an open session cannot switch the source off: %v", err)
	}
	select {
	case err := <-waiting:
		check.Must(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the account statement still waits with the source off")
	}
	check.Must(t, fresh.PingContext(ctx))
}
