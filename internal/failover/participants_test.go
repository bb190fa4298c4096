package failover

import (
	"slices"
	"testing"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestUnseenParticipant: no promotion past a replica that may hold acknowledged writes. With
// semi-sync on, a replica that did not answer blocks the failover whether its Pod runs, is being
// deleted or is gone, under both durabilities, until it answers again or a human fences it;
// without semi-sync it does not count.
func TestUnseenParticipant(t *testing.T) {
	goneBeforeItsLastAck := on("c-3", noPod)
	type row struct {
		name    string
		changes []change
		want    want
	}
	rows := func(d v1.DataDurability) []row {
		ss := semiSyncOn(d)
		return []row{
			{"a participant whose Pod runs and did not answer blocks the failover",
				[]change{primaryLost, ss, on("c-3", unreachable)},
				want{kind: Blocked, op: FailoverOperation, reason: "participant c-3 did not answer (its Pod runs)"}},
			{"a participant whose Pod is being deleted and did not answer blocks the failover",
				[]change{primaryLost, ss, on("c-3", unreachable), on("c-3", podDeleting)},
				want{kind: Blocked, op: FailoverOperation, reason: "participant c-3 did not answer (its Pod is being deleted)"}},
			{"a participant whose Pod is gone blocks the failover",
				[]change{primaryLost, ss, goneBeforeItsLastAck},
				want{kind: Blocked, op: FailoverOperation, reason: "participant c-3 did not answer (it has no Pod)"}},
			{"the reason says how the failover goes on",
				[]change{primaryLost, ss, goneBeforeItsLastAck},
				want{kind: Blocked, op: FailoverOperation, reason: "waits until it answers again, or until it is fenced"}},
			{"an unseen participant blocks before anything is touched: no IO thread stopped, no Pod deleted",
				[]change{on("c-1", unreachable), failingSince(t0.Add(-time.Minute)), ss, on("c-3", noPod)},
				want{kind: Blocked, op: FailoverOperation, reason: "participant c-3"}},
			{"an unseen participant blocks also after semi-sync fell back to asynchronous",
				[]change{primaryLost, ss, goneBeforeItsLastAck, func(o *Observation) { o.Status.SemiSyncFallenBack = true }},
				want{kind: Blocked, op: FailoverOperation, reason: "participant c-3"}},
			{"the participant back on its PVC with the acknowledged tail in its relay log is promoted",
				[]change{primaryLost, ss, on("c-3", retrieved(a("1-12"))), on("c-3", executed(a("1-10")))},
				want{kind: Wait, op: FailoverOperation, reason: "c-3 applies its relay log"}},
			{"the participant back, its relay log applied: it is the candidate",
				[]change{primaryLost, ss, on("c-3", history(a("1-12")))},
				want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
			{"a fenced participant that did not answer does not block: a human gave up what only it holds",
				[]change{primaryLost, ss, goneBeforeItsLastAck, fenced("c-3")},
				want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
			{"a diverged replica that did not answer does not block",
				[]change{primaryLost, ss, goneBeforeItsLastAck, diverged("c-3")},
				want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
			{"a failover target lost before it promoted is an unseen participant: the others may lack what it acknowledged",
				[]change{primaryLost, ss, target("c-2", t0.Add(-time.Second)), on("c-2", noPod)},
				want{kind: Blocked, op: FailoverOperation, reason: "participant c-2 did not answer (it has no Pod)"}},
		}
	}
	var all []row
	for _, d := range []v1.DataDurability{v1.DataDurabilityPreferred, v1.DataDurabilityRequired} {
		for _, r := range rows(d) {
			r.name = "semi-sync " + string(d) + ": " + r.name
			all = append(all, r)
		}
	}
	all = append(all,
		row{"asynchronous: a replica whose Pod runs and did not answer does not block (nothing it alone holds was acknowledged)",
			[]change{primaryLost, on("c-3", unreachable)},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		row{"asynchronous: a replica whose Pod is being deleted does not block",
			[]change{primaryLost, on("c-3", unreachable), on("c-3", podDeleting)},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		row{"asynchronous: a replica whose Pod is gone does not block",
			[]change{primaryLost, goneBeforeItsLastAck},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		row{"asynchronous: a replica that answered holding more than the candidate still blocks",
			[]change{primaryLost, fenced("c-3"), on("c-3", history(a("1-12")))},
			want{kind: Blocked, op: FailoverOperation, reason: "c-3 holds transactions the best eligible replica c-2 lacks"}},
	)
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			check(t, build(slices.Clone(tc.changes)...), tc.want)
		})
	}
}
