package failover

import (
	"testing"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestDecideAfterFallback: a failover from a primary that fell back to asynchronous replication
// (the Lease's record, or its last report), under required and preferred, with the old primary's
// catch-up recorded or not, and with a person's acceptance of the loss.
func TestDecideAfterFallback(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []change
		want    want
	}{
		{"semi-sync fallen back to async: the failover warns acknowledged writes may be lost",
			[]change{primaryLost, func(o *Observation) { o.Status.SemiSyncFallenBack = true }},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2", warning: "may be lost"}},
		{"fallback recorded under required: the failover is blocked, naming the GTID set it fell back at",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false)},
			want{kind: Blocked, op: FailoverOperation, reason: "acknowledged after " + a("1-10").String() + " may exist on it alone"}},
		{"fallback recorded under required: blocked before its replicas are cut from it or its Pod deleted, so it can catch them up",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-time.Minute)), on("c-1", func(in *Instance) { in.PodExists = true }),
				semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false)},
			want{kind: Blocked, op: FailoverOperation, reason: "may exist on it alone"}},
		{"fallback recorded under preferred: the failover goes on, warning of the GTID set at risk",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityPreferred), fallbackRecord("c-1", false)},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2", warning: "acknowledged after " + a("1-10").String()}},
		{"fallback recorded and resumed since: the failover goes on without a warning",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", true)},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"a fallback record of another instance (an earlier primary) does not block",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-3", false)},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"fallen back when it last reported, under required, without a record (no Lease): blocked",
			[]change{primaryLost, leaseOff, semiSyncOn(v1.DataDurabilityRequired), func(o *Observation) { o.Status.SemiSyncFallenBack = true }},
			want{kind: Blocked, op: FailoverOperation, reason: "fallen back to asynchronous replication on c-1 when it last reported"}},
		{"fallen back when it last reported, under required, with the Lease on and no record at risk: the record decides, it warns",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", true), func(o *Observation) { o.Status.SemiSyncFallenBack = true }},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2", warning: "may be lost"}},
		{"fallback recorded under required, the old primary answers read-only and the candidate has all it executed: it waits for that to be recorded",
			[]change{on("c-1", notReady), failingSince(t0.Add(-time.Minute)), on("c-2", ioStopped), on("c-3", ioStopped),
				on("c-1", readOnly), semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false)},
			want{kind: Wait, op: FailoverOperation, reason: "goes on once the operator has recorded that"}},
		{"fallback recorded under required, the old primary's catch-up recorded: its Pod is deleted",
			[]change{on("c-1", notReady), failingSince(t0.Add(-time.Minute)), on("c-2", ioStopped), on("c-3", ioStopped),
				on("c-1", readOnly), semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), caughtUp("1-10")},
			want{kind: Failover, step: StepDeletePod, instance: "c-1"}},
		{"fallback recorded under required, the old primary answers writable with all it executed on the candidate: demoted, its Pod kept until that is recorded",
			[]change{on("c-1", notReady), failingSince(t0.Add(-time.Minute)), on("c-2", ioStopped), on("c-3", ioStopped),
				semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), func(o *Observation) {
					o.Lease.RenewTime, o.Lease.ObservedAt = t0.Add(-time.Minute), t0.Add(-time.Minute)
				}},
			want{kind: Failover, step: StepDemote, instance: "c-1", reason: "so that what it executed can be recorded"}},
		{"fallback recorded under required, the old primary answers writable holding what the candidate lacks: blocked",
			[]change{on("c-1", notReady), failingSince(t0.Add(-time.Minute)), on("c-2", ioStopped), on("c-3", ioStopped),
				on("c-1", executed(a("1-12"))), semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), func(o *Observation) {
					o.Lease.RenewTime, o.Lease.ObservedAt = t0.Add(-time.Minute), t0.Add(-time.Minute)
				}},
			want{kind: Blocked, op: FailoverOperation, reason: "may exist on it alone"}},
		{"a recorded catch-up contradicted by the old primary answering with more than the candidate: blocked",
			[]change{on("c-1", notReady), failingSince(t0.Add(-time.Minute)), on("c-2", ioStopped), on("c-3", ioStopped),
				on("c-1", readOnly), on("c-1", executed(a("1-12"))), semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false),
				caughtUp("1-10")},
			want{kind: Blocked, op: FailoverOperation, reason: "may exist on it alone"}},
		{"a recorded catch-up contradicted by the old primary answering writable again: demoted, not past it",
			[]change{on("c-1", notReady), failingSince(t0.Add(-time.Minute)), on("c-2", ioStopped), on("c-3", ioStopped),
				semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), caughtUp("1-10"), func(o *Observation) {
					o.Lease.RenewTime, o.Lease.ObservedAt = t0.Add(-time.Minute), t0.Add(-time.Minute)
				}},
			want{kind: Failover, step: StepDemote, instance: "c-1", reason: "so that what it executed can be recorded"}},
		{"a fallback record left in a Lease since disabled is not read",
			[]change{primaryLost, leaseOff, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false)},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"a fallback record that cannot be read counts as one at risk",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), func(o *Observation) { o.Lease.Fallback = &FallbackRecord{Instance: "c-1"} }},
			want{kind: Blocked, op: FailoverOperation, reason: "cannot be read"}},
		{"accepted data loss: under required, a person's acceptance naming the failing primary lets the failover promote the named replica, warning of the loss",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), lossAccepted("c-1", "c-2")},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2", reason: "named by the person who accepted the loss",
				warning: "the loss was accepted at"}},
		{"accepted data loss: the named replica is promoted when it holds all the best one has",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), lossAccepted("c-1", "c-3")},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3", warning: "accept-data-loss"}},
		{"accepted data loss: a named replica behind another is not promoted (accepting one loss never adds another)",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), lossAccepted("c-1", "c-3"),
				on("c-2", history(a("1-12")))},
			want{kind: Blocked, op: FailoverOperation, reason: "c-3, named to be promoted past the loss, lacks"}},
		{"accepted data loss: a named replica that is not eligible is not promoted",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), lossAccepted("c-1", "c-3"), fenced("c-3")},
			want{kind: Blocked, op: FailoverOperation, reason: "c-3, named to be promoted past the loss, cannot be: fenced"}},
		{"accepted data loss: an acceptance naming another former primary does not count",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), lossAccepted("c-3", "c-2")},
			want{kind: Blocked, op: FailoverOperation, reason: "may exist on it alone"}},
		{"accepted data loss: it counts only while the primary's failure is recorded",
			[]change{on("c-1", unreachable), semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), lossAccepted("c-1", "c-2")},
			want{kind: Failover, step: StepRecordFailing, instance: "c-1"}},
		{"accepted data loss: an acceptance given for an earlier failure of the same primary does not count",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), lossAccepted("c-1", "c-2"),
				func(o *Observation) { o.Status.DataLossAccepted.FailingSince = t0.Add(-time.Hour) }},
			want{kind: Blocked, op: FailoverOperation, reason: "may exist on it alone"}},
		{"accepted data loss: an acceptance a failover already acted on does not count again",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), lossAccepted("c-1", "c-2"),
				func(o *Observation) { o.Status.DataLossAccepted.Promoted = true }},
			want{kind: Blocked, op: FailoverOperation, reason: "may exist on it alone"}},
		{"accepted data loss with nothing at risk: the named replica is promoted without a warning",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), lossAccepted("c-1", "c-3")},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
	} {
		t.Run(tc.name, func(t *testing.T) { check(t, build(tc.changes...), tc.want) })
	}
}
