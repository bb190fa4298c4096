package instancemanager

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// TestFailoverBlockedAfterFallback: the replica-partition-then-crash fault under dataDurability
// required with the default timeoutMillis. The primary is cut from both replicas only (clients,
// the API server and the operator still reach it) until its instance manager falls back to
// asynchronous replication, recorded first in the primary Lease; it acknowledges commits alone;
// then it dies for good, the cut left in place. No replica is promoted: the failover is blocked
// (Degraded, AcknowledgedWritesOnPrimaryOnly, a FailoverBlocked Event naming the GTID set). Once
// the old primary comes back and the cut heals, it is the primary again, the replicas catch up,
// the record says semi-sync resumed, and no acknowledged write is missing anywhere.
func TestFailoverBlockedAfterFallback(t *testing.T) {
	w := startNetCutWorld(t)
	steps := []step[*netCutWorld]{
		{"the operator creates the Pods and the Cluster becomes Ready", func(t *testing.T, w *netCutWorld) {
			testOperatorComeUp(t, w.operatorWorld)
		}},
		{"a primary that fell back and then died is not replaced under required; it comes back with every acknowledged write",
			testFailoverBlockedAfterFallback},
	}
	runSteps(t, w, steps, w.explain)
}

func testFailoverBlockedAfterFallback(t *testing.T, w *netCutWorld) {
	const old = "db-1"
	writer := w.startWriter(t, 2000000)
	eventually(t, 30*time.Second, "the writer's first acknowledged inserts", func() bool { return writer.count() >= 20 })

	w.cutPeers(old)
	cut := time.Now()
	eventually(t, semisync.RequiredMinFallback+30*time.Second, "the fallback of "+old+" recorded in the primary Lease", func() bool {
		rec, err := w.fallbackRecord(t)
		return err == nil && rec.AtRisk(old)
	})
	recorded := time.Since(cut)
	before := writer.count()
	eventually(t, 20*time.Second, "commits acknowledged by "+old+" alone", func() bool { return writer.count() >= before+20 })
	t.Logf("fallback recorded %s after the cut; %d commits acknowledged before it, %d since", recorded.Round(10*time.Millisecond),
		before, writer.count()-before)

	w.crashNode(t, old)
	crashed := time.Now()
	acked, fails := writer.finish()
	t.Logf("crashed %s; the writer: %d acknowledged, %d not", old, len(acked), fails)

	// Blocked, never promoted: watched until well past the Lease's expiry.
	var blockedAt time.Time
	deadline := crashed.Add(failover.LeaseTTL + 30*time.Second)
	for time.Now().Before(deadline) {
		c := w.cluster(t)
		for _, name := range []string{"db-2", "db-3"} {
			if st := w.nodes[name].status(t); st != nil && st.Writable() {
				t.Fatalf("%s writable %s after the crash: promoted past the fallback", name, time.Since(crashed).Round(time.Millisecond))
			}
		}
		if c.Status.TargetPrimary != old {
			t.Fatalf("targetPrimary set to %s %s after the crash", c.Status.TargetPrimary, time.Since(crashed).Round(time.Millisecond))
		}
		if d := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionDegraded); blockedAt.IsZero() && d != nil &&
			d.Reason == failover.ReasonAcknowledgedWritesOnPrimaryOnly {
			blockedAt = time.Now()
			t.Logf("blocked %s after the crash: %s", blockedAt.Sub(crashed).Round(time.Millisecond), d.Message)
			deadline = blockedAt.Add(10 * time.Second)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if blockedAt.IsZero() {
		t.Fatalf("no Degraded condition with reason %s within %s of the crash", failover.ReasonAcknowledgedWritesOnPrimaryOnly,
			failover.LeaseTTL+30*time.Second)
	}
	if ev := w.events(t)[failover.EventFailoverBlocked]; ev == "" {
		t.Error("no FailoverBlocked Event")
	} else if rec, _ := w.fallbackRecord(t); rec == nil ||
		rec.GTIDExecuted == "" || !strings.Contains(ev, rec.GTIDExecuted) {
		t.Errorf("the FailoverBlocked Event does not name the GTID set of the fallback record %+v: %s", rec, ev)
	}

	// The old primary comes back and the cut heals: it is the primary again, the replicas catch
	// up, semi-sync resumes and the record says so.
	w.heal(old)
	w.startNode(t, old)
	// The record is marked resumed at the first commit acknowledged after semi-sync is back: a
	// client keeps writing.
	id := 3000000
	eventually(t, 120*time.Second, old+" writable again, the Cluster Ready, the fallback record resumed", func() bool {
		c := w.cluster(t)
		st := w.nodes[old].status(t)
		if st != nil && st.Writable() {
			id++
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			if _, err := w.nodes[old].db.ExecContext(ctx, "INSERT INTO app.t VALUES (?)", id); err == nil {
				acked = append(acked, id)
			}
			cancel()
		}
		rec, err := w.fallbackRecord(t)
		return st != nil && st.Writable() && c.Status.CurrentPrimary == old &&
			meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady) && err == nil && rec != nil && rec.Resumed
	})
	for _, name := range []string{old, "db-2", "db-3"} {
		n := w.nodes[name]
		eventually(t, 30*time.Second, "every acknowledged write on "+name, func() bool { return len(missingRows(t, n, acked)) == 0 })
	}
	t.Logf("all %d acknowledged writes on the three instances; back %s after the crash", len(acked), time.Since(crashed).Round(time.Second))
}
