package instance

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// TestInstances drives three real servers with DecideRole, RoleActor and the semi-sync plan alone
// (no operator, no Kubernetes): the instance-side half of declarative roles. The steps share the
// servers and run in order.
func TestInstances(t *testing.T) {
	m := startMembers(t, "c-1", "c-2", "c-3")
	status := &v1alpha1.ClusterStatus{}
	ok := t.Run("roles converge through bootstrap, switchover and rejoin", func(t *testing.T) {
		testRoleConvergence(t, m, status)
	})
	ok = ok && t.Run("the semi-sync plan follows replica health", func(t *testing.T) {
		testSemiSyncPlan(t, m, "c-2", []string{"c-1", "c-3"})
	})
	ok = ok && t.Run("the instance manager falls back only under a fresh Lease, and semi-sync comes back", func(t *testing.T) {
		testSemiSyncFallback(t, m, "c-2", []string{"c-1", "c-3"})
	})
	ok = ok && t.Run("the control API reports status and applies the semi-sync count", func(t *testing.T) {
		testControlAPI(t, m, "c-2", "c-1")
	})
	ok = ok && t.Run("the operator's count and the role pass's convergence do not undo each other", func(t *testing.T) {
		testSemiSyncWritersInterleaved(t, m, "c-2")
	})
	ok = ok && t.Run("maxSyncReplicas 1: the operator tells one replica of two to acknowledge", func(t *testing.T) {
		testSemiSyncMaxSyncReplicas(t, m, "c-2", []string{"c-1", "c-3"})
	})
	ok = ok && t.Run("the control API stops a replica's IO thread and demotes the primary", func(t *testing.T) {
		testControlAPIRoleChanges(t, m, "c-2", "c-1")
	})
	ok = ok && t.Run("a demoted primary ends the sessions a pool reopens while a write Service routes to it", func(t *testing.T) {
		testDemotedSessionSweep(t, m, "c-2", "c-1")
	})
	ok = ok && t.Run("an errant write makes a replica diverged", func(t *testing.T) {
		testDiverged(t, m, status)
	})
	ok = ok && t.Run("a promotion the Cluster no longer names leaves the server read-only", func(t *testing.T) {
		testPromotionNoLongerTarget(t, m, status)
	})
	ok = ok && t.Run("a replica whose relay logs were discarded (RESET REPLICA) follows again", func(t *testing.T) {
		testReplicaFollowsAfterRepair(t, m, status)
	})
	if !ok {
		t.Fatal("a step failed; the steps after it did not run")
	}
}

// testRoleConvergence: bootstrap with c-1 as primary, a switchover to a lagging c-2 by changing
// targetPrimary, and c-1's rejoin as a replica.
func testRoleConvergence(t *testing.T, m map[string]*member, status *v1alpha1.ClusterStatus) {
	names := []string{"c-1", "c-2", "c-3"}
	for _, n := range names {
		if err := m[n].op.SetReadOnly(t.Context(), true); err != nil { // as my.cnf starts them
			t.Fatal(err)
		}
	}
	status.TargetPrimary = "c-1"

	// Bootstrap: c-1 promotes itself; the others wait until currentPrimary is recorded.
	if d, out := m["c-1"].reconcile(t, status, m); d.Action != ActPrimary || !out.Primary || !m["c-1"].writable(t) {
		t.Fatalf("c-1: %s (%s), outcome %+v", d.Action, d.Reason, out)
	}
	if d, _ := m["c-2"].reconcile(t, status, m); d.Action != ActHold {
		t.Fatalf("c-2 before currentPrimary: %s, want hold", d.Action)
	}
	status.CurrentPrimary = "c-1"
	if err := m["c-1"].op.CreateUsers(t.Context(), roleTestUsers); err != nil {
		t.Fatal(err)
	}
	m["c-1"].exec(t, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1)")
	converge(t, m, status, names)
	expectFollowing(t, m, "c-1", "c-2", "c-3")

	// Switchover: targetPrimary moves to c-2. The old primary turns read-only first, then c-2
	// drains and promotes, then the others (the old primary included) follow it.
	// c-2 is behind: its replication is stopped while the primary commits more.
	if err := m["c-2"].op.StopReplication(t.Context()); err != nil {
		t.Fatal(err)
	}
	m["c-1"].exec(t, "INSERT INTO app.t VALUES (2)", "INSERT INTO app.t VALUES (20)")
	status.TargetPrimary = "c-2"
	if d, _ := m["c-1"].reconcile(t, status, m); d.Action != ActHold || m["c-1"].writable(t) {
		t.Fatalf("old primary: %s, writable %v; want hold, read-only", d.Action, m["c-1"].writable(t))
	}
	oldPrimarySet := m["c-1"].gtidSet(t)
	begin := time.Now()
	if d, out := m["c-2"].reconcile(t, status, m); d.Action != ActPrimary || !out.Primary || !m["c-2"].writable(t) {
		t.Fatalf("c-2: %s (%s), outcome %+v", d.Action, d.Reason, out)
	}
	t.Logf("c-2 drained and promoted in %s", time.Since(begin).Round(time.Millisecond))
	if !m["c-2"].gtidSet(t).Contains(oldPrimarySet) {
		t.Fatalf("promoted c-2 lacks transactions of the old primary: %s vs %s", m["c-2"].gtidSet(t), oldPrimarySet)
	}
	status.CurrentPrimary = "c-2"
	converge(t, m, status, names)
	m["c-2"].exec(t, "INSERT INTO app.t VALUES (3)")
	expectFollowing(t, m, "c-2", "c-1", "c-3")
}

// testDiverged: an errant write on c-3 makes it diverged at the next pass.
func testDiverged(t *testing.T, m map[string]*member, status *v1alpha1.ClusterStatus) {
	// An errant write on c-3: the next pass finds it diverged, stops replication, stays read-only.
	if err := m["c-3"].op.SetReadOnly(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	m["c-3"].exec(t, "INSERT INTO app.t VALUES (100)")
	d, out := m["c-3"].reconcile(t, status, m)
	if d.Action != ActDiverged || !out.Diverged || d.Errant.Count() != 1 || m["c-3"].writable(t) {
		t.Fatalf("c-3 after an errant write: %s, errant %q, outcome %+v, writable %v", d.Action, d.Errant, out, m["c-3"].writable(t))
	}
	st, err := m["c-3"].op.Status(t.Context())
	if err != nil || st.Replication == nil || st.Replication.IORunning != "No" || st.Replication.SQLRunning != "No" {
		t.Fatalf("diverged c-3 still replicating: %+v, %v", st.Replication, err)
	}
	// Once listed as diverged, it is never promoted, even as the target.
	status.DivergedInstances, status.TargetPrimary = []string{"c-3"}, "c-3"
	if d, _ := m["c-3"].reconcile(t, status, m); d.Action != ActDiverged || m["c-3"].writable(t) {
		t.Fatalf("diverged target: %s, writable %v", d.Action, m["c-3"].writable(t))
	}
}

// testPromotionNoLongerTarget: a replica whose promotion was decided on an older read of the
// Cluster confirms the target once more before it clears read-only; the operator aborted the
// switchover meanwhile, so it stays read-only and writes nothing.
func testPromotionNoLongerTarget(t *testing.T, m map[string]*member, status *v1alpha1.ClusterStatus) {
	var r *member
	for _, n := range []string{"c-1", "c-2", "c-3"} {
		if n != status.CurrentPrimary && !slices.Contains(status.DivergedInstances, n) {
			r = m[n]
			break
		}
	}
	before := r.gtidSet(t)
	st, err := r.op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	r.actor.StillTarget = func(context.Context) (bool, error) { asked++; return false, nil }
	defer func() { r.actor.StillTarget = nil }()
	_, err = r.actor.Apply(t.Context(), RoleDecision{Action: ActPrimary, Reason: "target primary"}, st)
	if !errors.Is(err, ErrNoLongerTarget) || asked != 1 {
		t.Fatalf("%s: Apply = %v after %d confirmations; want ErrNoLongerTarget after one", r.name, err, asked)
	}
	// The applier may still apply what was received before the promotion reset replication;
	// the server itself writes nothing.
	after := r.gtidSet(t)
	own := gtid.MustParse(st.ServerUUID + ":1-1000000")
	if added := after.Subtract(before); r.writable(t) || !added.Subtract(own).Equal(added) {
		t.Errorf("%s: writable %v, GTID set %q -> %q; want read-only and no transaction of its own", r.name, r.writable(t), before, after)
	}
}

// converge reconciles every instance in order, twice, as repeated passes would.
func converge(t *testing.T, m map[string]*member, status *v1alpha1.ClusterStatus, names []string) {
	t.Helper()
	for range 2 {
		for _, n := range names {
			m[n].reconcile(t, status, m)
		}
	}
}

// expectFollowing checks that each replica is read-only, replicates from primary and has
// applied everything the primary executed.
func expectFollowing(t *testing.T, m map[string]*member, primary string, replicas ...string) {
	t.Helper()
	want := m[primary].gtidSet(t)
	for _, r := range replicas {
		if err := m[r].op.WaitForGTIDSet(t.Context(), want, 10*time.Second); err != nil {
			t.Fatalf("%s did not catch up with %s: %v", r, primary, err)
		}
		st, err := m[r].op.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if st.Writable() || st.Replication == nil || !st.Replication.Healthy() || st.Replication.SourceHost != m[primary].srv.Host {
			t.Errorf("%s: writable %v, replication %+v; want read-only, following %s", r, st.Writable(), st.Replication, primary)
		}
	}
}
