package mysql_test

import (
	"context"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestBootstrapAccountsUnlogged: on a first primary whose semi-sync source side is on with no
// replica, the bootstrap accounts complete at once (a binary-logged account statement would wait
// for an acknowledgement forever), add nothing to gtid_executed, and leave the Operator's pool
// binary-logging: the unlogged sessions (the plugins' installation's and the bootstrap's) are
// not given back to it.
func TestBootstrapAccountsUnlogged(t *testing.T) {
	n := startNodes(t, 1)[0]
	ctx := t.Context()
	n.exec(t, "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF")
	check.Must(t, n.op.InstallSemiSyncPlugins(ctx))
	check.Must(t, n.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 1, Timeout: mysql.SourceTimeoutNever}))
	before := n.status(t).GTIDExecuted.String()

	app := mysql.Application{Database: "shop", Owner: mysql.Account{Name: "shopper", Password: "shop-pw"}}
	bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	begin := time.Now()
	err := n.op.BootstrapAccounts(bctx, &app, testUsers)
	cancel()
	check.Must(t, err)
	t.Logf("bootstrap accounts took %s", time.Since(begin).Round(time.Millisecond))
	if after := n.status(t).GTIDExecuted.String(); after != before {
		t.Errorf("gtid_executed went from %q to %q: the bootstrap statements were binary-logged", before, after)
	}
	var users int
	check.Must(t, n.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM mysql.user WHERE user IN (?, ?, ?)",
		testUsers.Replication.Name, testUsers.Backup.Name, app.Owner.Name).Scan(&users))
	var databases int
	check.Must(t, n.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", app.Database).Scan(&databases))
	if users != 3 || databases != 1 {
		t.Errorf("after the bootstrap: %d of the 3 accounts, %d of the 1 database", users, databases)
	}

	// The pool binary-logs again: with the source side off, every write through it adds a GTID.
	check.Must(t, n.op.SetSemiSyncSourceEnabled(ctx, false))
	for i := range 3 {
		was := n.status(t).GTIDExecuted.String()
		check.Must(t, n.op.CreateApplication(ctx, mysql.Application{Database: "logged" + string(rune('a'+i)),
			Owner: mysql.Account{Name: "logged" + string(rune('a'+i)), Password: "pw"}}))
		if now := n.status(t).GTIDExecuted.String(); now == was {
			t.Errorf("write %d through the Operator's pool left gtid_executed at %q: a session kept sql_log_bin=0", i+1, now)
		}
	}
}
