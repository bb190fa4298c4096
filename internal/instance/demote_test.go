package instance

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// TestDemotion drives a real primary and its semi-sync replica, with the primary Lease on a real
// API server: a demotion is serialised with a promotion under one gate, and it reports the
// server read-only only once no commit waits for a semi-sync acknowledgement any more. The steps
// share the servers and run in order.
func TestDemotion(t *testing.T) {
	m := startMembers(t, "c-1", "c-2")
	env := kubetest.StartT(t, kubetest.Options{})
	status := &v1alpha1.ClusterStatus{TargetPrimary: "c-1"}
	for _, n := range []string{"c-1", "c-2"} {
		must(t, m[n].op.SetReadOnly(t.Context(), true))
	}
	if d, out := m["c-1"].reconcile(t, status, m); !out.Primary {
		t.Fatalf("c-1: %s (%s), want primary", d.Action, d.Reason)
	}
	status.CurrentPrimary = "c-1"
	must(t, m["c-1"].op.CreateUsers(t.Context(), roleTestUsers))
	m["c-1"].exec(t, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)",
		"CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'", "GRANT INSERT, SELECT ON app.* TO 'app'@'%'")
	converge(t, m, status, []string{"c-1", "c-2"})
	lease := NewPrimaryLease(env.Client, types.NamespacedName{Namespace: env.NewNamespace(t), Name: "db-primary"}, failover.LeaseHolder{Instance: "c-1"},
		clock.RealClock{}, func(ctx context.Context) error { return StopWrites(ctx, m["c-1"].op, testr.New(t)) }, testr.New(t))
	lease.Configure(true, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "u-1"})
	api := serveControlAPI(t, &ControlAPI{Instance: "c-1", Op: m["c-1"].op, AllowedClients: []string{certs.OperatorCommonName},
		Demote: lease.Demote, Log: testr.New(t)})
	demote := func(ctx context.Context) error { return api.operator.Demote(ctx, api.target) }

	ok := t.Run("a demotion waits for a promotion under way, and no promotion decided before it makes the server writable again", func(t *testing.T) {
		testDemoteSerialisedWithPromotion(t, m["c-1"], lease, demote)
	})
	ok = ok && t.Run("a demotion reports read-only only once no commit waits for a semi-sync acknowledgement", func(t *testing.T) {
		testDemoteEndsAckWaits(t, m, lease, demote)
	})
	if !ok {
		t.Fatal("a step failed")
	}
}

// testDemoteSerialisedWithPromotion: a role reconciler pass that decided to promote (it read a
// Cluster naming this instance target primary) is clearing read-only while POST /demote arrives.
// Unserialised, the demotion would turn the server read-only first and the promotion make it
// writable after it. Serialised, the demotion waits for the gate and wins; a further promotion
// decided before the demotion is refused, until a Cluster read after it no longer names this
// instance.
func testDemoteSerialisedWithPromotion(t *testing.T, p *member, lease *PrimaryLease, demote func(context.Context) error) {
	mark := lease.DemotionMark() // the pass reads the Cluster here
	entered, release := make(chan struct{}), make(chan struct{})
	promoted := make(chan error, 1)
	go func() {
		promoted <- lease.AllowWrites(t.Context(), func(ctx context.Context) error {
			close(entered)
			<-release // the pass is slow: a demotion arrives meanwhile
			return p.op.SetReadOnly(ctx, false)
		})
	}()
	<-entered
	demoted := make(chan error, 1)
	var demoteDone atomic.Bool
	go func() { demoted <- demote(t.Context()); demoteDone.Store(true) }()
	time.Sleep(300 * time.Millisecond) // the demotion request reaches the instance
	close(release)
	must(t, <-promoted)
	must(t, <-demoted)
	if p.writable(t) {
		t.Fatal("the server is writable after a demotion that arrived while a promotion cleared read-only")
	}
	// A pass that read the Cluster before the demotion promotes again: refused, read-only.
	if err := lease.AllowWrites(t.Context(), func(ctx context.Context) error { return p.op.SetReadOnly(ctx, false) }); !errors.Is(err, ErrDemoted) {
		t.Fatalf("a promotion after the demotion: %v, want ErrDemoted", err)
	}
	lease.EndDemotion(mark)
	if !lease.Demoted() || p.writable(t) {
		t.Fatal("a Cluster read before the demotion lifted its latch")
	}
	// A Cluster read after the demotion that no longer names this instance lifts the latch: a
	// later promotion is the operator's new decision (a switchover aborted back to it).
	lease.EndDemotion(lease.DemotionMark())
	must(t, lease.AllowWrites(t.Context(), func(ctx context.Context) error { return p.op.SetReadOnly(ctx, false) }))
	if !p.writable(t) {
		t.Fatal("the server stays read-only after the latch was lifted and it was promoted")
	}
}

// testDemoteEndsAckWaits: with the replica's receiver stopped, a client's commit on the primary
// waits for a semi-sync acknowledgement: it is in the binary log, not in gtid_executed. The
// demotion returns only once it no longer waits: the server is read-only, its gtid_executed holds
// the transaction (everything it wrote), the client got an error (never acknowledged), and the
// replica, receiving again, gets it: a target checked against that set misses nothing.
func testDemoteEndsAckWaits(t *testing.T, m map[string]*member, lease *PrimaryLease, demote func(context.Context) error) {
	p, r := m["c-1"], m["c-2"]
	spec := &v1alpha1.ClusterSpec{Instances: 2, MinSyncReplicas: 1, MaxSyncReplicas: 1,
		MySQL: v1alpha1.MySQLConfiguration{SemiSync: &v1alpha1.SemiSyncConfiguration{
			Enabled: true, TimeoutMillis: time.Minute.Milliseconds(), DataDurability: v1alpha1.DataDurabilityPreferred}}}
	applyPlan(t, m, spec, "c-1", []string{"c-2"})
	waitSemiSync(t, p, func(s mysql.SemiSyncStatus) bool { return s.SourceActive && s.Clients == 1 })
	must(t, r.op.StopReceiver(t.Context()))
	before := p.gtidSet(t)
	app, err := p.srv.OpenDB(t.Context(), "app", "app-pw", "")
	must(t, err)
	defer app.Close()
	committed := make(chan error, 1)
	go func() {
		_, err := app.ExecContext(t.Context(), "INSERT INTO app.t VALUES (4242)")
		committed <- err
	}()
	check.Eventually(t, 10*time.Second, "a commit waiting for its acknowledgement", check.True(func() bool {
		st, err := p.op.Status(t.Context())
		return err == nil && st.SemiSync.AckWaiters == 1
	}))
	if got := p.gtidSet(t); !got.Equal(before) {
		t.Fatalf("gtid_executed moved to %s while the commit waits; the test needs it unchanged", got)
	}
	must(t, demote(t.Context()))
	st, err := p.op.Status(t.Context())
	must(t, err)
	if !st.SuperReadOnly || st.SemiSync.AckWaiters != 0 {
		t.Fatalf("after the demotion: super_read_only %v, %d commits waiting; want read-only, none waiting", st.SuperReadOnly, st.SemiSync.AckWaiters)
	}
	wrote := st.GTIDExecuted.Subtract(before)
	if wrote.Count() != 1 {
		t.Fatalf("after the demotion gtid_executed holds %s beyond the set before the commit; want the waiting commit", wrote)
	}
	select {
	case err := <-committed:
		if err == nil {
			t.Error("the waiting commit was acknowledged to its client without a replica's acknowledgement")
		}
	case <-time.After(5 * time.Second):
		t.Error("the client of the waiting commit got no answer after the demotion")
	}
	must(t, r.op.StartReplication(t.Context()))
	must(t, r.op.WaitForGTIDSet(t.Context(), st.GTIDExecuted, 10*time.Second))
	var n int
	must(t, r.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM app.t WHERE id = 4242").Scan(&n))
	if n != 1 {
		t.Errorf("the replica holds %d rows of the commit, want 1", n)
	}
}
