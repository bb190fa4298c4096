package instancemanager

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// updateSpec edits the Cluster's spec as a user would.
func (w *world) updateSpec(t *testing.T, edit func(*v1alpha1.ClusterSpec)) {
	t.Helper()
	eventually(t, 10*time.Second, "spec updated", func() bool {
		c := w.cluster(t)
		edit(&c.Spec)
		return w.env.Client.Update(t.Context(), c) == nil
	})
}

// commit inserts one row on the primary and returns how long it took and the semi-sync counters
// before and after.
func commit(t *testing.T, p *node, id int) (time.Duration, mysql.SemiSyncStatus, mysql.SemiSyncStatus) {
	t.Helper()
	before := p.status(t).SemiSync
	begin := time.Now()
	if _, err := p.db.ExecContext(t.Context(), "INSERT INTO app.t VALUES (?)", id); err != nil {
		t.Fatal(err)
	}
	took := time.Since(begin)
	return took, before, p.status(t).SemiSync
}

// testDurability stops one of the two replicas with minSyncReplicas 2: under preferred the
// operator's plan lowers the count to 1 and commits stay acknowledged; under required the count
// stays 2, a commit waits timeoutMillis and the primary falls back to async, which its status
// reports; once the replica is back, commits are acknowledged again.
func testDurability(t *testing.T, w *world) {
	p, down := w.nodes["db-2"], w.nodes["db-1"]
	w.updateSpec(t, func(s *v1alpha1.ClusterSpec) { s.MinSyncReplicas = 2 })
	if plan := w.applySemiSyncPlan(t, "db-2"); plan.WaitForReplicaCount != 2 {
		t.Fatalf("both replicas healthy: count %d, want 2", plan.WaitForReplicaCount)
	}
	down.stop(t)
	if plan := w.applySemiSyncPlan(t, "db-2"); plan.WaitForReplicaCount != 1 || !plan.Lowered {
		t.Fatalf("preferred with a replica down: plan %+v, want the count lowered to 1", plan)
	}
	took, before, after := commit(t, p, 10)
	if after.YesTx != before.YesTx+1 || after.NoTx != before.NoTx || took > time.Second {
		t.Errorf("preferred: commit took %s, yes_tx %d -> %d, no_tx %d -> %d; want acknowledged at once",
			took, before.YesTx, after.YesTx, before.NoTx, after.NoTx)
	}
	w.updateSpec(t, func(s *v1alpha1.ClusterSpec) { s.MySQL.SemiSync.DataDurability = v1alpha1.DataDurabilityRequired })
	if plan := w.applySemiSyncPlan(t, "db-2"); plan.WaitForReplicaCount != 2 || !plan.Short {
		t.Fatalf("required with a replica down: plan %+v, want the count pinned at 2", plan)
	}
	took, before, after = commit(t, p, 11)
	t.Logf("required, a replica down: the commit took %s", took.Round(time.Millisecond))
	if after.NoTx != before.NoTx+1 || took < 1900*time.Millisecond || after.SourceActive {
		t.Errorf("required: commit took %s, no_tx %d -> %d, active %v; want the 2 s timeout and a fallback to async",
			took, before.NoTx, after.NoTx, after.SourceActive)
	}
	if r, err := w.operator.Status(t.Context(), p.target()); err != nil || r.SemiSync == nil || r.SemiSync.Active {
		t.Errorf("the control API reports %+v, %v; want semi-sync inactive", r, err)
	}
	w.start(t, down)
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(down.dir, "manager.log"))
			t.Logf("restarted db-1's manager log:\n%s", head(string(log), 6000))
		}
	})
	w.waitRoles(t, 30*time.Second, "db-2", "db-1", "db-3")
	eventually(t, 10*time.Second, "two semi-sync replicas connected", func() bool {
		st := p.status(t)
		return st != nil && st.SemiSync.Clients == 2
	})
	// The primary switches semi-sync back on once a replica acknowledges a commit it sent, so the
	// first commits after the fallback may still be asynchronous; mysqld reports the source side
	// active again only once the replica has caught up with it.
	for id := 12; ; id++ {
		if id > 12 {
			time.Sleep(200 * time.Millisecond)
		}
		took, before, after = commit(t, p, id)
		if after.YesTx == before.YesTx+1 && after.SourceActive && took < time.Second {
			t.Logf("replica back: commit %d acknowledged by both in %s", id-11, took.Round(time.Millisecond))
			break
		}
		if id == 41 {
			t.Fatalf("replica back: thirty commits 200 ms apart, the last took %s, yes_tx %d -> %d, no_tx %d -> %d, active %v; want acknowledged",
				took, before.YesTx, after.YesTx, before.NoTx, after.NoTx, after.SourceActive)
		}
	}
	// The fallback was recorded in the primary Lease before it happened; the acknowledged commit
	// marks it resumed.
	eventually(t, 5*time.Second, "the Lease's fallback record of db-2 marked resumed", func() bool {
		rec, err := w.fallbackRecord(t)
		return err == nil && rec != nil && rec.Instance == "db-2" && rec.Resumed && rec.ResumedGTIDSet != ""
	})
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
