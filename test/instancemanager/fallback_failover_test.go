package instancemanager

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
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

// partitionThenCrash writes through old, the primary, silently cuts it from its replicas until it
// has recorded its fallback and acknowledged commits alone (checking that semi-sync, turned back
// on for replicas that only look connected, never again holds a commit for timeoutMillis), then
// crashes it for good with the cut left in place. It returns the acknowledged inserts in commit
// order, how many of them came before the cut, and when the crash was.
func partitionThenCrash(t *testing.T, w *netCutWorld, old string) (acked []int, beforeCut int, crashed time.Time) {
	writer := w.startWriter(t, 2000000)
	eventually(t, 30*time.Second, "the writer's first acknowledged inserts", func() bool { return writer.count() >= 20 })

	// A silent partition: the replicas' connections stay open and pass nothing, so on the
	// primary they look connected and caught up (their dump threads write into socket buffers).
	beforeCut = writer.count()
	w.stallPeers(old)
	cut := time.Now()
	eventually(t, semisync.RequiredMinFallback+30*time.Second, "the fallback of "+old+" recorded in the primary Lease", func() bool {
		rec, err := w.fallbackRecord(t)
		return err == nil && rec.AtRisk(old)
	})
	recordedAt := time.Now()
	recorded := recordedAt.Sub(cut)
	before := writer.count()
	eventually(t, 20*time.Second, "commits acknowledged by "+old+" alone", func() bool { return writer.count() >= before+20 })
	// Should semi-sync be turned back on for replicas that only look connected, it is a probe: no
	// replica acknowledges, so the probe's commits are released after semisync.ProbeWait and the
	// next probe waits longer. Never again does a commit wait for the fallback's own time.
	spec := w.cluster(t).Spec
	fallbackAfter := semisync.PlanFor(&spec, nil).FallbackAfter
	time.Sleep(2*fallbackAfter - time.Since(recordedAt))
	gap := writer.longestGap(recordedAt, time.Now())
	t.Logf("fallback recorded %s after the cut; %d commits acknowledged before it, %d since; longest time without an acknowledged commit since: %s",
		recorded.Round(10*time.Millisecond), before, writer.count()-before, gap.Round(10*time.Millisecond))
	if gap >= fallbackAfter {
		t.Errorf("after the fallback, %s without an acknowledged commit (the fallback waits %s): semi-sync went back on for replicas that cannot acknowledge, "+
			"and commits waited that long again", gap.Round(10*time.Millisecond), fallbackAfter)
	}

	w.crashNode(t, old)
	crashed = time.Now()
	acked, fails := writer.finish()
	t.Logf("crashed %s; the writer: %d acknowledged, %d not", old, len(acked), fails)
	return acked, beforeCut, crashed
}

// waitFailoverBlocked checks that no replica is promoted past old's recorded fallback, and that the
// Cluster says so: Degraded with reason AcknowledgedWritesOnPrimaryOnly, a FailoverBlocked Event
// naming the record's GTID set; watched until well past the Lease's expiry.
func waitFailoverBlocked(t *testing.T, w *netCutWorld, old string, crashed time.Time) {

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
}

func testFailoverBlockedAfterFallback(t *testing.T, w *netCutWorld) {
	const old = "db-1"
	acked, _, crashed := partitionThenCrash(t, w, old)
	waitFailoverBlocked(t, w, old, crashed)

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

// TestFailoverPastFallbackAcceptedByAPerson: the same fault, then a person accepts the loss
// (kubectl cloudnative-mysql promote db db-2 --accept-data-loss, naming the most advanced replica). The failover promotes it; the
// status and a DataLossAccepted Event record what was given up; the writes lost are exactly
// commits db-1 acknowledged alone after its recorded fallback, none from before the cut. When db-1
// comes back it is reported diverged with those transactions, kept read-only and never rejoined or
// cloned over: they stay there for a person to recover.
func TestFailoverPastFallbackAcceptedByAPerson(t *testing.T) {
	w := startNetCutWorld(t)
	steps := []step[*netCutWorld]{
		{"the operator creates the Pods and the Cluster becomes Ready", func(t *testing.T, w *netCutWorld) {
			testOperatorComeUp(t, w.operatorWorld)
		}},
		{"a person accepts the loss of what the crashed primary acknowledged alone; it comes back diverged with those writes",
			testFailoverPastFallbackAccepted},
	}
	runSteps(t, w, steps, w.explain)
}

func testFailoverPastFallbackAccepted(t *testing.T, w *netCutWorld) {
	const old = "db-1"
	acked, beforeCut, crashed := partitionThenCrash(t, w, old)
	waitFailoverBlocked(t, w, old, crashed)
	// A person names the most advanced replica, as the blocked failover's message asks: which one
	// received the last transaction before the cut (or through a receiver that reconnected after
	// replica_net_timeout) varies from run to run.
	named := "db-2"
	if s2, s3 := w.nodes["db-2"].gtidExecuted(t), w.nodes["db-3"].gtidExecuted(t); !s2.Contains(s3) {
		named = "db-3"
	}
	rec, err := w.fallbackRecord(t)
	if err != nil || rec == nil {
		t.Fatalf("the fallback record: %+v, %v", rec, err)
	}

	if _, err := plugin.AcceptDataLoss(t.Context(), w.env.Client, clock.RealClock{}, w.key.Namespace, w.key.Name, named); err != nil {
		t.Fatal(err)
	}
	accepted := time.Now()
	eventually(t, 90*time.Second, named+" the writable primary", func() bool {
		st := w.nodes[named].status(t)
		return st != nil && st.Writable() && w.cluster(t).Status.CurrentPrimary == named
	})
	t.Logf("%s writable and the primary %s after the acceptance", named, time.Since(accepted).Round(10*time.Millisecond))
	a := w.cluster(t).Status.DataLossAccepted
	if a == nil || a.FormerPrimary != old || a.Instance != named || a.PromotedAt == nil || !strings.Contains(a.Lost, rec.GTIDExecuted) {
		t.Errorf("status.dataLossAccepted %+v: want %s given up for %s, promoted, the loss after %s named", a, old, named, rec.GTIDExecuted)
	}
	if ev := w.events(t)["DataLossAccepted"]; !strings.Contains(ev, rec.GTIDExecuted) {
		t.Errorf("DataLossAccepted Event %q does not name the GTID set the primary fell back at (%s)", ev, rec.GTIDExecuted)
	}

	lost := missingRows(t, w.nodes[named], acked)
	t.Logf("%d of %d acknowledged writes are not on %s", len(lost), len(acked), named)
	if len(lost) < 20 {
		t.Errorf("%d acknowledged writes lost: the fault made %s acknowledge at least 20 alone", len(lost), old)
	}
	if missing := missingRows(t, w.nodes[named], acked[:beforeCut]); len(missing) > 0 {
		t.Errorf("%d writes acknowledged before the cut are lost, first %d: the loss reaches before the fallback", len(missing), missing[0])
	}

	// db-1 comes back: diverged, reported with its transactions, read-only, its rows kept.
	w.heal(old)
	w.startNode(t, old)
	eventually(t, 120*time.Second, old+" listed diverged and an InstanceDiverged Event naming its errant GTIDs", func() bool {
		return slices.Contains(w.cluster(t).Status.DivergedInstances, old) && strings.Contains(w.events(t)["InstanceDiverged"], "errant GTIDs")
	})
	t.Logf("InstanceDiverged: %s", w.events(t)["InstanceDiverged"])
	oldSet, newSet := w.nodes[old].gtidExecuted(t), w.nodes[named].gtidExecuted(t)
	errant := gtid.Errant(oldSet, newSet)
	recorded := gtid.MustParse(rec.GTIDExecuted)
	if in := errant.Intersect(recorded); !in.IsEmpty() || errant.Count() < uint64(len(lost)) {
		t.Errorf("%s's errant transactions %s: want at least the %d lost writes, all after the recorded %s (before it: %s)",
			old, errant, len(lost), rec.GTIDExecuted, in)
	}
	time.Sleep(10 * time.Second) // long enough for a rejoin or a clone to have started
	if st := w.nodes[old].status(t); st == nil || !st.SuperReadOnly {
		t.Errorf("%s is not super_read_only after coming back diverged: %+v", old, st)
	}
	if missing := missingRows(t, w.nodes[old], lost); len(missing) > 0 {
		t.Errorf("%s no longer holds %d of the lost writes, first %d: it was rejoined or cloned over", old, len(missing), missing[0])
	}
}
