package instance

import (
	"strconv"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

const planTimeout = 500 * time.Millisecond

// testSemiSyncPlan: with minSyncReplicas 2 and a replica stopped, preferred lowers the count so
// commits stay fast and acknowledged; required keeps it; the replica's return brings both
// acknowledgements back.
func testSemiSyncPlan(t *testing.T, m map[string]*member, primary string, replicas []string) {
	spec := &v1alpha1.ClusterSpec{Instances: 3, MinSyncReplicas: 2, MaxSyncReplicas: 2,
		MySQL: v1alpha1.MySQLConfiguration{SemiSync: &v1alpha1.SemiSyncConfiguration{
			Enabled: true, TimeoutMillis: planTimeout.Milliseconds(), DataDurability: v1alpha1.DataDurabilityPreferred}}}
	p := m[primary]
	plan := applyPlan(t, m, spec, primary, replicas)
	if plan.WaitForReplicaCount != 2 || plan.Lowered {
		t.Fatalf("all healthy: plan %+v", plan)
	}
	waitSemiSync(t, p, func(s mysql.SemiSyncStatus) bool { return s.SourceActive && s.Clients == 2 })
	expectCommit(t, p, true, false)

	stopped := m[replicas[1]]
	if err := stopped.op.StopReplication(t.Context()); err != nil {
		t.Fatal(err)
	}
	plan = applyPlan(t, m, spec, primary, replicas)
	if plan.WaitForReplicaCount != 1 || !plan.Lowered {
		t.Fatalf("preferred with a replica down: plan %+v", plan)
	}
	expectCommit(t, p, true, false) // one acknowledgement is enough now: no wait

	spec.MySQL.SemiSync.DataDurability = v1alpha1.DataDurabilityRequired
	plan = applyPlan(t, m, spec, primary, replicas)
	if plan.WaitForReplicaCount != 2 || !plan.Short {
		t.Fatalf("required with a replica down: plan %+v", plan)
	}
	// A commit would now wait until the instance manager falls back (testSemiSyncFallback).

	if err := stopped.op.StartReplication(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitSemiSync(t, p, func(s mysql.SemiSyncStatus) bool { return s.SourceActive && s.Clients == 2 })
	if plan = applyPlan(t, m, spec, primary, replicas); plan.Short {
		t.Errorf("replica back: plan %+v", plan)
	}
	expectCommit(t, p, true, false)
}

// applyPlan gathers the replicas' health, plans, and applies the plan to every instance.
func applyPlan(t *testing.T, m map[string]*member, spec *v1alpha1.ClusterSpec, primary string, replicas []string) semisync.Plan {
	t.Helper()
	var health []semisync.ReplicaHealth
	for _, r := range replicas {
		st, err := m[r].op.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		health = append(health, semisync.HealthOf(r, st))
	}
	plan := semisync.PlanFor(spec, health)
	// The primary first: replicas register as semi-sync clients when their receiver reconnects.
	for _, name := range append([]string{primary}, replicas...) {
		if err := ApplySemiSyncPlan(t.Context(), m[name].op, plan, name, name == primary); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return plan
}

func semiSync(t *testing.T, p *member) mysql.SemiSyncStatus {
	t.Helper()
	st, err := p.op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st.SemiSync
}

// waitSemiSync waits for cond on the primary's semi-sync status, committing a heartbeat row at
// each poll: the source turns semi-sync on when an acknowledgement shows a replica caught up.
func waitSemiSync(t *testing.T, p *member, cond func(mysql.SemiSyncStatus) bool) {
	t.Helper()
	var last mysql.SemiSyncStatus
	deadline := time.Now().Add(15 * time.Second)
	for {
		p.exec(t, "INSERT INTO app.t VALUES (0) ON DUPLICATE KEY UPDATE id = 0")
		if last = semiSync(t, p); cond(last) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("semi-sync condition not reached within 15s; last status %+v", last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// nextID numbers the rows expectCommit inserts.
var nextID = 1000

// expectCommit commits one row and checks whether it was acknowledged and whether it waited
// about the semi-sync timeout.
func expectCommit(t *testing.T, p *member, acked, waited bool) {
	t.Helper()
	before := semiSync(t, p)
	nextID++
	begin := time.Now()
	p.exec(t, "INSERT INTO app.t VALUES ("+strconv.Itoa(nextID)+")")
	took := time.Since(begin)
	after := semiSync(t, p)
	if gotAcked := after.YesTx > before.YesTx; gotAcked != acked {
		t.Errorf("commit acknowledged = %v (yes_tx %d -> %d), want %v", gotAcked, before.YesTx, after.YesTx, acked)
	}
	if gotWaited := took >= planTimeout*9/10; gotWaited != waited {
		t.Errorf("commit took %s (timeout %s), waited = %v, want %v", took, planTimeout, gotWaited, waited)
	}
	t.Logf("commit took %s, acknowledged %v", took.Round(time.Millisecond), after.YesTx > before.YesTx)
}
