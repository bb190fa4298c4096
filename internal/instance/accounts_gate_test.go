package instance

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// TestAccountsOnPrimary drives the accounts hook on real servers whose semi-sync source side is on
// with no replica connected: a first primary's accounts complete at once and add nothing to
// gtid_executed; another primary's wait for the replicas to connect, for at most accountGateMax,
// and then run binary-logged, waiting for the fallback like any commit.
func TestAccountsOnPrimary(t *testing.T) {
	m := startMembers(t, "c-1", "c-2")
	ctx := t.Context()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	semiSyncAlone := func(mem *member) {
		mem.exec(t, "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF")
		must(t, mem.op.InstallSemiSyncPlugins(ctx))
		must(t, mem.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 1, Timeout: mysql.SourceTimeoutNever}))
		t.Cleanup(func() { _ = mem.op.SetSemiSyncSourceEnabled(context.Background(), false) })
	}
	hookOf := func(mem *member) func(context.Context, bool) error {
		cluster := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}}
		k8s := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(cluster).Build()
		mgr := &manager{cfg: &RunConfig{Instance: mem.name, DataDir: t.TempDir()}, cluster: client.ObjectKeyFromObject(cluster),
			deps: RunDeps{Client: k8s, Clock: clk, Log: testr.New(t)}, op: mem.op}
		return mgr.accountsOnPrimary(roleTestUsers, testr.New(t).WithValues("instance", mem.name))
	}
	gtids := func(mem *member) string {
		st, err := mem.op.Status(ctx)
		must(t, err)
		return st.GTIDExecuted.String()
	}
	accounts := func(mem *member) int {
		var n int
		must(t, mem.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM mysql.user WHERE user IN (?, ?)",
			roleTestUsers.Replication.Name, roleTestUsers.Backup.Name).Scan(&n))
		return n
	}

	t.Run("a first primary's accounts complete at once, unlogged", func(t *testing.T) {
		first := m["c-1"]
		semiSyncAlone(first)
		before := gtids(first)
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		must(t, hookOf(first)(hctx, true))
		if n := accounts(first); n != 2 {
			t.Errorf("%d of the 2 accounts after the hook", n)
		}
		if after := gtids(first); after != before {
			t.Errorf("gtid_executed %q -> %q: the first primary's accounts were binary-logged", before, after)
		}
	})

	t.Run("another primary's accounts wait for the replicas at most accountGateMax, then for the fallback", func(t *testing.T) {
		promoted := m["c-2"]
		semiSyncAlone(promoted)
		// The fallback's own session, opened before: a waiting account statement blocks logins.
		kept, err := mysql.NewFactory().NewKeptLocalAdmin(promoted.srv.MySQLConfig("root", "", ""))
		must(t, err)
		defer kept.Close()
		_, err = kept.Status(ctx) // opens the session now
		must(t, err)
		hook := hookOf(promoted)
		must(t, hook(ctx, false))
		clk.Step(accountGateMax - time.Second)
		must(t, hook(ctx, false))
		if n := accounts(promoted); n != 0 {
			t.Fatalf("%d accounts created while no semi-sync replica was connected, before accountGateMax", n)
		}
		clk.Step(time.Second)
		done := make(chan error, 1)
		go func() { done <- hook(context.WithoutCancel(ctx), false) }()
		select {
		case err := <-done:
			t.Fatalf("the account statements returned (%v) without an acknowledgement or a fallback", err)
		case <-time.After(time.Second):
		}
		must(t, kept.SetSemiSyncSourceEnabled(ctx, false)) // the fallback
		select {
		case err := <-done:
			must(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("the account statements still wait after the fallback")
		}
		if n := accounts(promoted); n != 2 {
			t.Errorf("%d of the 2 accounts after the fallback", n)
		}
	})
}
