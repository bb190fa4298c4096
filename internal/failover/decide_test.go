package failover

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

type want struct {
	kind      Kind
	op        Operation
	step      Step
	instance  string
	instances []string
	until     time.Time
	catchUp   *gtid.Set
	reason    string // a part of the reason
	warning   string // a part of the warning
	deletePod string
}

func check(t *testing.T, o Observation, w want) {
	t.Helper()
	d := Decide(o)
	if err := checkSafety(o, d); err != nil {
		t.Errorf("safety: %v", err)
	}
	if d.Kind != w.kind || d.Step != w.step || d.Instance != w.instance || !slices.Equal(d.Instances, w.instances) {
		t.Fatalf("Decide = %s/%s %q %v (%s), want %s/%s %q %v", d.Kind, d.Step, d.Instance, d.Instances, d.Reason,
			w.kind, w.step, w.instance, w.instances)
	}
	if d.DeletePod != w.deletePod {
		t.Errorf("deletePod = %q, want %q", d.DeletePod, w.deletePod)
	}
	if w.op != NoOperation && d.Operation != w.op {
		t.Errorf("operation = %s, want %s", d.Operation, w.op)
	}
	if !w.until.IsZero() && !d.Until.Equal(w.until) {
		t.Errorf("until = %s, want %s", d.Until, w.until)
	}
	if d.Kind == Wait && !d.Until.After(o.Now) {
		t.Errorf("a wait until %s is not after now %s", d.Until, o.Now)
	}
	if w.catchUp != nil && !d.CatchUp.Equal(*w.catchUp) {
		t.Errorf("catchUp = %s, want %s", d.CatchUp, w.catchUp)
	}
	if !strings.Contains(d.Reason, w.reason) {
		t.Errorf("reason %q does not say %q", d.Reason, w.reason)
	}
	if !strings.Contains(d.Warning, w.warning) || (w.warning == "" && d.Warning != "") {
		t.Errorf("warning %q, want %q", d.Warning, w.warning)
	}
}

func setPtr(s gtid.Set) *gtid.Set { return &s }

// TestDecideSteady: the rules that hold while targetPrimary is the current primary.
func TestDecideSteady(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []change
		want    want
	}{
		{"no established primary yet: nothing",
			[]change{current("", time.Time{}), target("", time.Time{})},
			want{kind: Nothing, reason: "no established primary"}},
		{"two writable instances: blocked, nothing promoted or resumed",
			[]change{on("c-3", func(in *Instance) { in.ReadOnly, in.SuperReadOnly = false, false })},
			want{kind: Blocked, instances: []string{"c-1", "c-3"}, reason: "several instances accept writes"}},
		{"a healthy primary: nothing",
			nil,
			want{kind: Nothing, reason: "healthy"}},
		{"a fenced primary stops writes deliberately and starts no failover",
			[]change{fenced("c-1"), on("c-1", readOnly)},
			want{kind: Nothing, reason: "fenced"}},
		{"primary unreachable: record primaryFailingSince",
			[]change{on("c-1", unreachable)},
			want{kind: Failover, step: StepRecordFailing, instance: "c-1", until: t0.Add(30 * time.Second), reason: "does not answer"}},
		{"primary not observed at all counts as failing",
			[]change{func(o *Observation) { o.Instances = o.Instances[1:] }},
			want{kind: Failover, step: StepRecordFailing, instance: "c-1", reason: "missing"}},
		{"primary not observed at all: the failover stops the IO threads reading from it",
			[]change{func(o *Observation) { o.Instances = o.Instances[1:] }, failingSince(t0.Add(-time.Minute))},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}}},
		{"primary not observed at all, IO threads stopped, Lease expired: promote",
			[]change{primaryLost, func(o *Observation) { o.Instances = o.Instances[1:] }},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"primary Pod being deleted counts as failing",
			[]change{on("c-1", podDeleting)},
			want{kind: Failover, step: StepRecordFailing, instance: "c-1", reason: "being deleted"}},
		{"primary Pod not ready counts as failing when its manager does not renew its Lease",
			[]change{on("c-1", notReady), leaseRenewed(t0.Add(-time.Minute))},
			want{kind: Failover, step: StepRecordFailing, instance: "c-1", reason: "not ready"}},
		{"readiness alone is no failure: a primary whose Pod is not ready but which answers as the writable primary and renews its Lease is not failed over",
			[]change{on("c-1", notReady)},
			want{kind: Nothing}},
		{"readiness alone is no failure: a failure recorded for it is cleared",
			[]change{on("c-1", notReady), failingSince(t0.Add(-time.Minute)), failoverDelay(0)},
			want{kind: Failover, step: StepClearFailing, instance: "c-1"}},
		{"readiness alone is no failure only while the primary answers: not ready and not answering is failing",
			[]change{on("c-1", notReady), on("c-1", unreachable)},
			want{kind: Failover, step: StepRecordFailing, instance: "c-1"}},
		{"primary read-only counts as failing",
			[]change{on("c-1", readOnly)},
			want{kind: Failover, step: StepRecordFailing, instance: "c-1", reason: "read-only"}},
		{"a primary that answers, its Pod ready, but read-only is given ReadOnlyGrace to turn writable again (an aborted switchover), whatever the failoverDelay",
			[]change{on("c-1", readOnly), failingSince(t0.Add(-2 * time.Second)), failoverDelay(0), noLease},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(ReadOnlyGrace - 2*time.Second), reason: "failoverDelay"}},
		{"a primary still read-only after ReadOnlyGrace is failed over",
			[]change{on("c-1", readOnly), failingSince(t0.Add(-ReadOnlyGrace)), failoverDelay(0), noLease},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}, deletePod: "c-1"}},
		{"failover delay: wait until primaryFailingSince plus failoverDelay",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-10 * time.Second))},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(20 * time.Second), reason: "failoverDelay"}},
		{"a primary promoted by a failover gets its own failing time: the old primaryFailingSince does not count",
			[]change{current("c-1", t0.Add(-time.Minute)), on("c-1", notReady), leaseRenewed(t0.Add(-time.Minute)), failingSince(t0.Add(-2 * time.Minute)), failoverDelay(0)},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}}},
		{"a primary is not failed over within NewPrimaryGrace of its promotion, whatever the failoverDelay",
			[]change{current("c-1", t0.Add(-5*time.Second)), on("c-1", notReady), leaseRenewed(t0.Add(-time.Minute)), failingSince(t0.Add(-2 * time.Minute)), failoverDelay(0)},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(10 * time.Second), reason: "failoverDelay"}},
		{"failover delay 0 fails over at once (the primary's Lease no longer renewed)",
			[]change{on("c-1", unreachable), failingSince(t0), failoverDelay(0), leaseRenewed(t0.Add(-9 * time.Second))},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}, deletePod: "c-1"}},
		{"in-place recovery: a failing primary whose manager still renews its Lease (mysqld restarting) is given InPlaceRecoveryGrace",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-2 * time.Second)), failoverDelay(0), leaseRenewed(t0)},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(8 * time.Second), reason: "recovering in place"}},
		{"in-place recovery: the wait ends when the Lease renewal is overdue, not at the end of the grace (a manager cut off or gone no longer renews)",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-time.Second)), failoverDelay(0), leaseRenewed(t0.Add(-3 * time.Second))},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(5 * time.Second), reason: "recovering in place"}},
		{"in-place recovery: a primary found failing while it renews is recorded, and looked at again when its renewal is overdue",
			[]change{on("c-1", unreachable), failoverDelay(0), leaseRenewed(t0.Add(-2 * time.Second))},
			want{kind: Failover, step: StepRecordFailing, instance: "c-1", until: t0.Add(6 * time.Second), reason: "does not answer"}},
		{"in-place recovery: once the renewal is overdue (leaseRenewalFresh since the operator saw it) the failover starts",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-time.Second)), failoverDelay(0), leaseRenewed(t0.Add(-leaseRenewalFresh))},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}, deletePod: "c-1"}},
		{"in-place recovery: the grace over, the failover starts although the Lease is renewed",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-InPlaceRecoveryGrace)), failoverDelay(0), leaseRenewed(t0.Add(-time.Second))},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}, deletePod: "c-1"}},
		{"in-place recovery: a longer failoverDelay still counts",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-2 * time.Second)), failoverDelay(time.Minute), leaseRenewed(t0.Add(-time.Second))},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(58 * time.Second)}},
		{"in-place recovery: not for a primary whose Pod is being deleted",
			[]change{on("c-1", unreachable), on("c-1", podDeleting), failingSince(t0.Add(-2 * time.Second)), failoverDelay(0), leaseRenewed(t0.Add(-time.Second))},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}}},
		{"in-place recovery: not when the Lease is held by another instance",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-2 * time.Second)), failoverDelay(0), leaseRenewed(t0.Add(-time.Second)), leaseHolder("c-2")},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}, deletePod: "c-1"}},
		{"in-place recovery: not with enablePrimaryLease false",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-2 * time.Second)), failoverDelay(0), leaseRenewed(t0.Add(-time.Second)), leaseOff},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}, deletePod: "c-1"}},
		{"a failing primary not seen accepting writes (it does not answer): its replicas' IO threads stopped and its Pod deleted in the same step",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-time.Minute))},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}, deletePod: "c-1", reason: "then delete its Pod"}},
		{"a failing primary seen accepting writes: its replicas' IO threads stopped, its Pod not deleted before it is demoted",
			[]change{on("c-1", notReady), leaseRenewed(t0.Add(-time.Minute)), failingSince(t0.Add(-time.Minute))},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}}},
		{"every replica's IO thread from the old primary is stopped before promotion",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-time.Minute))},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-2", "c-3"}, reason: "semi-sync", deletePod: "c-1"}},
		{"a replica whose IO thread still runs from the old primary is stopped before promotion",
			[]change{primaryLost, on("c-3", func(in *Instance) { in.Replication.IORunning = true })},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-3"}}},
		{"a failing primary that still accepts writes is demoted first, its Pod deleted in the same act",
			[]change{on("c-1", notReady), leaseRenewed(t0.Add(-time.Minute)), failingSince(t0.Add(-time.Minute)), on("c-2", ioStopped), on("c-3", ioStopped)},
			want{kind: Failover, step: StepDemote, instance: "c-1", deletePod: "c-1"}},
		{"the old primary's Pod is deleted, its PVC kept",
			[]change{primaryLost, on("c-1", func(in *Instance) { in.PodExists = true })},
			want{kind: Failover, step: StepDeletePod, instance: "c-1", reason: "keep its PVC"}},
		{"the candidate applies its relay log before it is promoted",
			[]change{primaryLost, on("c-2", retrieved(a("1-12"))), on("c-3", history(a("1-11")))},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(PollInterval), reason: "c-2 applies its relay log"}},
		{"lease timing: a Lease held by the old primary is waited out from its last renewal",
			[]change{primaryLost, leaseRenewed(t0.Add(-5 * time.Second))},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(10 * time.Second), reason: "held by c-1"}},
		{"lease timing: a Lease held by any other instance is waited out too",
			[]change{primaryLost, leaseRenewed(t0.Add(-5 * time.Second)), leaseHolder("c-3")},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(10 * time.Second), reason: "held by c-3"}},
		{"lease timing, clock skew (holder behind): the TTL counts from when the operator saw the renewal, not from renewTime",
			[]change{primaryLost, leaseRenewed(t0.Add(-time.Minute)), leaseSeen(t0.Add(-5 * time.Second))},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(10 * time.Second), reason: "held by c-1"}},
		{"lease timing, clock skew (holder ahead within the allowed skew): a renewTime ahead of the operator's sighting holds the failover until it plus the TTL",
			[]change{primaryLost, leaseRenewed(t0.Add(-5 * time.Second)), leaseSeen(t0.Add(-5*time.Second - LeaseMaxClockSkew))},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(10 * time.Second), reason: "held by c-1"}},
		{"lease timing, clock skew (holder ahead beyond the allowed skew): the renewTime counts as observed, and no longer holds the failover",
			[]change{primaryLost, leaseRenewed(t0.Add(time.Hour)), leaseSeen(t0.Add(-LeaseTTL))},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"lease timing, clock skew: a Lease seen unchanged for its TTL and renewed more than a TTL ago is expired",
			[]change{primaryLost, leaseRenewed(t0.Add(-time.Hour)), leaseSeen(t0.Add(-LeaseTTL))},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"a replica whose IO thread is still connecting to the failing primary is stopped before promotion (it would acknowledge once it connects)",
			[]change{primaryLost, on("c-3", func(in *Instance) { in.Replication.IORunning, in.Replication.IOState = false, "Connecting" })},
			want{kind: Failover, step: StepStopIOThreads, instances: []string{"c-3"}}},
		{"a replica whose IO thread is stopped (IOState No) is not stopped again",
			[]change{primaryLost, on("c-3", func(in *Instance) { in.Replication.IORunning, in.Replication.IOState = false, "No" })},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"lease timing: the Lease expired on the operator's clock promotes while the old primary's deleted Pod still terminates (no wait for the Pod to be gone)",
			[]change{primaryLost, on("c-1", func(in *Instance) { in.PodExists, in.PodDeleting = true, true })},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"lease timing: the Lease live while the old primary's deleted Pod terminates: wait for the Lease, whichever ends first",
			[]change{primaryLost, on("c-1", func(in *Instance) { in.PodExists, in.PodDeleting = true, true }), leaseRenewed(t0.Add(-5 * time.Second))},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(10 * time.Second), reason: "held by c-1"}},
		{"lease timing: the old primary's Pod gone and its Lease released (no holder): promote at once, no Lease wait",
			[]change{primaryLost, leaseRenewed(t0.Add(-time.Second)), leaseHolder("")},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"lease timing: the old primary's Pod gone but its Lease not released (a killed manager): wait for the Lease, a gone Pod is no proof",
			[]change{primaryLost, leaseRenewed(t0.Add(-time.Second))},
			want{kind: Wait, op: FailoverOperation, until: t0.Add(14 * time.Second), reason: "held by c-1"}},
		{"the Lease expired: promote the candidate",
			[]change{primaryLost},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"no Lease at all: promote the candidate",
			[]change{primaryLost, noLease},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"enablePrimaryLease=false relies on Pod deletion: a live Lease is not waited for",
			[]change{primaryLost, leaseOff, leaseRenewed(t0.Add(-time.Second)),
				on("c-1", func(in *Instance) { in.PodExists, in.PodDeleting = true, true })},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"enablePrimaryLease=false still deletes the old primary's Pod first",
			[]change{primaryLost, leaseOff, on("c-1", func(in *Instance) { in.PodExists = true })},
			want{kind: Failover, step: StepDeletePod, instance: "c-1"}},
		{"candidate selection: the replica holding the most history (executed and retrieved)",
			[]change{primaryLost, on("c-2", history(a("1-11"))), on("c-3", history(a("1-12")))},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
		{"candidate selection: retrieved transactions count as history",
			[]change{primaryLost, on("c-2", history(a("1-11"))), on("c-3", func(in *Instance) { in.Executed, in.Retrieved = a("1-12"), a("1-12") })},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
		{"candidate selection: equal histories go to the earliest instance",
			[]change{primaryLost},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"the fenced instance is never a candidate",
			[]change{primaryLost, fenced("c-2")},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
		{"a diverged instance is never a candidate",
			[]change{primaryLost, diverged("c-2"), on("c-2", history(set(a("1-10"), b("1"))))},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
		{"a replica whose Pod is not ready is never a candidate",
			[]change{primaryLost, on("c-2", notReady)},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
		{"a replica with an SQL thread error is never a candidate",
			[]change{primaryLost, on("c-2", func(in *Instance) { in.Replication.SQLLastError = "Error 1062" })},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
		{"a replica with a stopped SQL thread is never a candidate",
			[]change{primaryLost, on("c-2", func(in *Instance) { in.Replication.SQLRunning = false })},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
		{"blocked failover: the candidates' GTID sets diverge",
			[]change{primaryLost, on("c-2", history(set(a("1-10"), b("1")))), on("c-3", history(a("1-11")))},
			want{kind: Blocked, op: FailoverOperation, reason: "diverge"}},
		{"blocked failover: no replica is eligible",
			[]change{primaryLost, on("c-2", notReady), on("c-3", unreachable)},
			want{kind: Blocked, op: FailoverOperation, reason: "no replica is eligible"}},
		{"blocked failover: a replica that is not eligible holds transactions the candidate lacks",
			[]change{primaryLost, fenced("c-3"), on("c-3", history(a("1-12")))},
			want{kind: Blocked, op: FailoverOperation, reason: "c-3 holds transactions"}},
		{"blocked failover stops no IO thread",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-time.Minute)), on("c-2", notReady), on("c-3", notReady)},
			want{kind: Blocked, op: FailoverOperation}},
		{"two writable instances never: a writable replica holds back any promotion",
			[]change{primaryLost, on("c-3", func(in *Instance) { in.ReadOnly, in.SuperReadOnly = false, false })},
			want{kind: Wait, reason: "c-3 still accepts writes"}},
		{"two writable instances never: a writable replica holds back a switchover's promotion",
			[]change{target("c-2", t0), on("c-1", func(in *Instance) { in.Role = "replica"; readOnly(in) }),
				on("c-3", func(in *Instance) { in.ReadOnly, in.SuperReadOnly = false, false })},
			want{kind: Wait, reason: "c-3 still accepts writes"}},
		{"after a failover, replicas are repointed to the new primary",
			[]change{primaryLost, current("c-2", t0), target("c-2", t0.Add(-time.Second)),
				on("c-2", func(in *Instance) { *in = primaryInstance("c-2", a("1-12")) })},
			want{kind: Failover, step: StepRepoint, instances: []string{"c-3"}}},
		{"failover completed clears primaryFailingSince",
			[]change{primaryLost, current("c-2", t0), target("c-2", t0.Add(-time.Second)),
				on("c-2", func(in *Instance) { *in = primaryInstance("c-2", a("1-12")) }), on("c-3", source("c-2")),
				on("c-3", func(in *Instance) { in.Replication.IORunning = true })},
			want{kind: Failover, step: StepClearFailing, instance: "c-2", reason: "failover from c-1 completed: c-2 is the primary"}},
		{"failover completed within the second of the failure (the API keeps times to the second): still a failover",
			[]change{primaryLost, current("c-2", t0.Add(-time.Minute)), target("c-2", t0.Add(-time.Minute)),
				on("c-2", func(in *Instance) { *in = primaryInstance("c-2", a("1-12")) }), on("c-3", source("c-2")),
				on("c-3", func(in *Instance) { in.Replication.IORunning = true })},
			want{kind: Failover, step: StepClearFailing, instance: "c-2", reason: "failover from c-1 completed"}},
		{"failover completed, promotion stamped by a clock seconds behind the operator's: still a failover",
			[]change{primaryLost, current("c-2", t0.Add(-time.Minute-5*time.Second)), target("c-2", t0.Add(-time.Minute)),
				on("c-2", func(in *Instance) { *in = primaryInstance("c-2", a("1-12")) }), on("c-3", source("c-2")),
				on("c-3", func(in *Instance) { in.Replication.IORunning = true })},
			want{kind: Failover, step: StepClearFailing, instance: "c-2", reason: "failover from c-1 completed"}},
		{"failover seen only at its end, a replica still stopped by it: repointed first, as a failover",
			[]change{primaryLost, current("c-2", t0.Add(-time.Minute)), target("c-2", t0.Add(-time.Minute)),
				on("c-2", func(in *Instance) { *in = primaryInstance("c-2", a("1-12")) }), on("c-3", source("c-2"))},
			want{kind: Failover, step: StepRepoint, instances: []string{"c-3"}}},
		{"a status from an operator without failingPrimary: a promotion after the failure is a failover",
			[]change{primaryLost, failingPrimary(""), current("c-2", t0), target("c-2", t0.Add(-time.Second)),
				on("c-2", func(in *Instance) { *in = primaryInstance("c-2", a("1-12")) }), on("c-3", source("c-2")),
				on("c-3", func(in *Instance) { in.Replication.IORunning = true })},
			want{kind: Failover, step: StepClearFailing, instance: "c-2", reason: "failover completed: c-2 is the primary"}},
		{"the failing primary re-stamped later (its own clock ahead) is still the one that failed: healthy again",
			[]change{failingSince(t0.Add(-10 * time.Second)), current("c-1", t0)},
			want{kind: Failover, step: StepClearFailing, instance: "c-1", reason: "healthy again"}},
		{"a primary healthy again before failoverDelay clears primaryFailingSince",
			[]change{failingSince(t0.Add(-10 * time.Second))},
			want{kind: Failover, step: StepClearFailing, instance: "c-1", reason: "healthy again"}},
		{"a primary that recovers before it was replaced has primaryFailingSince cleared first, so replicas restart the IO threads the failover stopped",
			[]change{failingSince(t0.Add(-time.Minute)), on("c-2", ioStopped)},
			want{kind: Failover, step: StepClearFailing, instance: "c-1", reason: "healthy again"}},
		{"IO threads a failover stopped on the replicas of the new primary are restarted before primaryFailingSince is cleared",
			[]change{failingSince(t0.Add(-time.Minute)), failingPrimary("c-3"), current("c-1", t0.Add(-30*time.Second)), on("c-2", ioStopped)},
			want{kind: Failover, step: StepRepoint, instances: []string{"c-2"}}},
		{"a replica following another source is repointed",
			[]change{on("c-3", source("c-2"))},
			want{kind: Switchover, step: StepRepoint, instances: []string{"c-3"}}},
		{"a replica with an IO error is not repointed in a steady state",
			[]change{on("c-3", ioStopped), on("c-3", func(in *Instance) { in.Replication.IOLastError = "error connecting" })},
			want{kind: Nothing}},
	} {
		t.Run(tc.name, func(t *testing.T) { check(t, build(tc.changes...), tc.want) })
	}
}

// TestLeaseRenewalDue: when the operator looks at the primary if no renewal of its Lease came.
func TestLeaseRenewalDue(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []change
		due     time.Time
		ok      bool
		overdue bool
	}{
		{"detection: a renewal interval plus the slack after the operator saw the primary's last renewal",
			[]change{leaseRenewed(t0.Add(-2 * time.Second))}, t0.Add(4 * time.Second), true, false},
		{"detection: counted from when the operator saw the renewal, not from renewTime",
			[]change{leaseRenewed(t0.Add(-time.Hour)), leaseSeen(t0.Add(-time.Second))}, t0.Add(5 * time.Second), true, false},
		{"detection: the time passed without a renewal: overdue (the periodic reports go on)",
			[]change{leaseRenewed(t0.Add(-LeaseRenewInterval - LeaseRenewalSlack))}, time.Time{}, false, true},
		{"detection: a primary already recorded failing: the failover's own waits say when to look, the renewal still counts as overdue",
			[]change{failingSince(t0.Add(-time.Second)), leaseRenewed(t0.Add(-time.Minute))}, time.Time{}, false, true},
		{"detection: during a switchover no renewal is waited for",
			[]change{target("c-2", t0.Add(-time.Second)), leaseRenewed(t0.Add(-time.Second))}, time.Time{}, false, false},
		{"detection: a Lease held by another instance than the primary is not the primary's renewal",
			[]change{leaseHolder("c-2"), leaseRenewed(t0.Add(-time.Minute))}, time.Time{}, false, false},
		{"detection: a released Lease is not overdue", []change{leaseHolder(""), leaseRenewed(t0.Add(-time.Minute))}, time.Time{}, false, false},
		{"detection: no Lease", []change{noLease}, time.Time{}, false, false},
		{"detection: the Lease off", []change{leaseOff, leaseRenewed(t0.Add(-time.Minute))}, time.Time{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := build(tc.changes...)
			due, ok := LeaseRenewalDue(o)
			if ok != tc.ok || (ok && !due.Equal(tc.due)) {
				t.Errorf("LeaseRenewalDue = %s, %v; want %s, %v", due, ok, tc.due, tc.ok)
			}
			if got := LeaseRenewalOverdue(o); got != tc.overdue {
				t.Errorf("LeaseRenewalOverdue = %v, want %v", got, tc.overdue)
			}
		})
	}
}

// TestDecideFailoverPromotion: the rules once the failover has set targetPrimary.
func TestDecideFailoverPromotion(t *testing.T) {
	inFailover := []change{primaryLost, target("c-2", t0.Add(-time.Second))}
	for _, tc := range []struct {
		name    string
		changes []change
		want    want
	}{
		{"after targetPrimary is set, wait for the target to promote itself",
			nil,
			want{kind: Wait, op: FailoverOperation, reason: "waiting for c-2 to promote itself"}},
		{"a target holding the Lease is promoting: wait",
			[]change{leaseHolder("c-2"), leaseRenewed(t0), on("c-2", unreachable)},
			want{kind: Wait, op: FailoverOperation, reason: "waiting for c-2"}},
		{"a target lost before promoting, seen read-only: promote another candidate",
			[]change{on("c-2", notReady)},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
		{"a target whose Pod is gone before promoting, not holding the Lease: promote another candidate",
			[]change{on("c-2", unreachable), on("c-2", func(in *Instance) { in.PodExists = false })},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
		{"a target less advanced than another replica, seen read-only, is replaced by the more advanced one",
			// A switchover whose old primary's Pod went away waits here: its target must not be
			// promoted behind a replica holding acknowledged writes it lacks.
			[]change{on("c-3", history(a("1-12")))},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
		{"semi-sync: a target that runs but does not answer before promoting: blocked, it may hold acknowledged writes the others lack",
			[]change{semiSyncOn(v1.DataDurabilityPreferred), on("c-2", unreachable)},
			want{kind: Blocked, reason: "participant c-2 did not answer"}},
		{"asynchronous: a target that runs but does not answer before promoting, not holding the Lease: promote another candidate",
			[]change{on("c-2", unreachable)},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-3"}},
		{"a target unreachable without the Lease: blocked, it may have promoted",
			[]change{leaseOff, on("c-2", unreachable)},
			want{kind: Blocked, op: FailoverOperation, reason: "cannot be told"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check(t, build(append(slices.Clone(inFailover), tc.changes...)...), tc.want)
		})
	}
}

// TestDecideSwitchover: the rules of a planned switchover from c-1 to c-2, requested 10 s ago
// with maxSwitchoverDelay 1 min.
func TestDecideSwitchover(t *testing.T) {
	requested := target("c-2", t0.Add(-10*time.Second))
	late := target("c-2", t0.Add(-2*time.Minute))
	oldReadOnly := on("c-1", func(in *Instance) { in.Role = "replica"; readOnly(in) })
	for _, tc := range []struct {
		name    string
		changes []change
		want    want
	}{
		{"switchover validation: the target must exist",
			[]change{target("c-9", t0)},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "does not exist"}},
		{"switchover validation: the target must be ready",
			[]change{requested, on("c-2", notReady)},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "not ready"}},
		{"switchover validation: the target must not be fenced",
			[]change{requested, fenced("c-2")},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "fenced"}},
		{"switchover validation: the target must be a replica",
			[]change{requested, on("c-2", func(in *Instance) { in.Replication = nil })},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "not replicating"}},
		{"switchover validation: the target's SQL thread must be healthy",
			[]change{requested, on("c-2", func(in *Instance) { in.Replication.SQLLastError = "Error 1032" })},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "Error 1032"}},
		{"switchover validation: the target's IO thread must receive from the primary",
			[]change{requested, on("c-2", ioStopped)},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "not receiving"}},
		{"switchover validation: a target whose IO thread is connecting (no error) is not refused; it is waited for",
			[]change{requested, on("c-1", executed(a("1-12"))), on("c-2", func(in *Instance) { in.Replication.IORunning, in.Replication.IOState = false, "Connecting" })},
			want{kind: Wait, op: SwitchoverOperation, until: t0.Add(PollInterval), reason: "catches up"}},
		{"switchover validation: a target with transactions the primary never had is refused",
			[]change{requested, on("c-2", executed(set(a("1-10"), b("1"))))},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "never had"}},
		{"switchover validation: the target's GTID set must contain the primary's observed set (wait)",
			[]change{requested, on("c-1", executed(a("1-12")))},
			want{kind: Wait, op: SwitchoverOperation, until: t0.Add(PollInterval), reason: "catches up"}},
		{"switchover: a target that did not catch up within maxSwitchoverDelay is aborted, the old primary resumes",
			[]change{late, on("c-1", executed(a("1-12")))},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "maxSwitchoverDelay"}},
		{"a switchover asked while a primaryFailingSince of a moment ago is still recorded is a switchover: a target that cannot catch up is aborted",
			// The old primary turned read-only for an earlier, aborted switchover and was
			// recorded failing; its Pod still runs, so no failover moved targetPrimary.
			[]change{late, failingSince(t0.Add(-3 * time.Minute)), oldReadOnly, on("c-1", executed(a("1-12"))), on("c-2", executed(a("1-10")))},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "maxSwitchoverDelay"}},
		{"switchover: demote the old primary while it is reachable",
			[]change{requested},
			want{kind: Switchover, step: StepDemote, instance: "c-1"}},
		{"switchover: promote only after the old primary is seen read-only",
			[]change{requested, oldReadOnly},
			want{kind: Switchover, step: StepPromote, instance: "c-2", catchUp: setPtr(a("1-10"))}},
		{"switchover: after the demotion, a target holding all it must that reset its replication to promote itself is not aborted",
			// It stops and resets replication right before it takes the Lease and turns
			// writable: an abort then would leave its first writes (the accounts) errant on it.
			[]change{requested, oldReadOnly, on("c-2", func(in *Instance) { in.Replication = nil })},
			want{kind: Switchover, step: StepPromote, instance: "c-2", catchUp: setPtr(a("1-10"))}},
		{"switchover: after the demotion, a target holding all it must whose threads it stopped to promote itself is not aborted",
			[]change{requested, oldReadOnly, on("c-2", func(in *Instance) { in.Replication.SQLRunning = false; in.Replication.IORunning = false })},
			want{kind: Switchover, step: StepPromote, instance: "c-2", catchUp: setPtr(a("1-10"))}},
		{"switchover: after the demotion, a target whose applier failed with received transactions left is refused, not promoted",
			[]change{requested, oldReadOnly, on("c-2", func(in *Instance) {
				in.Replication.SQLRunning, in.Replication.SQLLastError = false, "Error 1062"
				in.Retrieved = a("1-11")
			})},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "Error 1062"}},
		{"switchover: after the demotion, a target without replication that lacks the old primary's set is aborted",
			[]change{requested, on("c-1", func(in *Instance) { in.Role = "replica"; readOnly(in); in.Executed = a("1-12") }),
				on("c-2", func(in *Instance) { in.Replication = nil })},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "not replicating"}},
		{"switchover: the old primary reachable but not yet read-only is demoted again",
			[]change{requested, on("c-1", func(in *Instance) { in.ReadOnly = true })},
			want{kind: Switchover, step: StepDemote, instance: "c-1"}},
		{"switchover: never promote on unreachable alone while the old primary's Lease is live",
			[]change{requested, on("c-1", unreachable)},
			want{kind: Wait, op: SwitchoverOperation, reason: "does not answer"}},
		{"switchover: the old primary unreachable and its Lease expired, its Pod still running: aborted, a failover fences it",
			[]change{requested, on("c-1", unreachable), leaseRenewed(t0.Add(-20 * time.Second))},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "fencing it first"}},
		{"switchover: the old primary unreachable, its Lease expired and its Pod gone: promote",
			[]change{requested, on("c-1", noPod), leaseRenewed(t0.Add(-20 * time.Second))},
			want{kind: Switchover, step: StepPromote, instance: "c-2", catchUp: setPtr(a("1-10"))}},
		{"switchover without the Lease: an unreachable old primary is never taken as stopped",
			[]change{requested, leaseOff, on("c-1", unreachable), leaseRenewed(t0.Add(-time.Hour))},
			want{kind: Wait, op: SwitchoverOperation, reason: "only seeing it read-only"}},
		{"switchover without the Lease: aborted at maxSwitchoverDelay when the old primary stays unreachable",
			[]change{late, leaseOff, on("c-1", unreachable)},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "neither seen read-only"}},
		{"a lagging target is re-checked after the old primary turned read-only: it receives the rest first",
			[]change{requested, oldReadOnly, on("c-1", executed(a("1-12"))), on("c-3", history(a("1-12")))},
			want{kind: Wait, op: SwitchoverOperation, reason: "missing " + srcA + ":11-12"}},
		{"switchover: commits of the old primary still waiting for semi-sync acknowledgements hold the promotion (its final set is not known)",
			[]change{requested, oldReadOnly, on("c-1", func(in *Instance) { in.AckWaiters = 1 })},
			want{kind: Wait, op: SwitchoverOperation, reason: "wait for semi-sync acknowledgements"}},
		{"switchover: what another replica received from the old primary is part of what the target must hold",
			[]change{requested, oldReadOnly, on("c-3", retrieved(a("1-11")))},
			want{kind: Wait, op: SwitchoverOperation, reason: "missing " + srcA + ":11"}},
		{"switchover: a target that received what the old primary wrote beyond its observed gtid_executed is promoted with it as catch-up",
			[]change{requested, oldReadOnly, on("c-3", retrieved(a("1-11"))), on("c-2", retrieved(a("1-11")))},
			want{kind: Switchover, step: StepPromote, instance: "c-2", catchUp: setPtr(a("1-11"))}},
		{"a target holding the old primary's final set once received is promoted with that catch-up set",
			[]change{requested, oldReadOnly, on("c-1", executed(a("1-12"))), on("c-2", retrieved(a("1-12")))},
			want{kind: Switchover, step: StepPromote, instance: "c-2", catchUp: setPtr(a("1-12"))}},
		{"a less advanced target is never promoted: another replica holds more and the old primary is gone",
			[]change{requested, on("c-1", unreachable), leaseRenewed(t0.Add(-20 * time.Second)), on("c-3", history(a("1-12")))},
			want{kind: Blocked, step: StepAbortSwitchover, instance: "c-1", reason: "less advanced"}},
		{"a target not ready after the demotion is waited for within maxSwitchoverDelay",
			[]change{requested, oldReadOnly, on("c-2", notReady)},
			want{kind: Wait, op: SwitchoverOperation, reason: "not ready"}},
		{"a target holding the Lease is promoting: wait for it",
			[]change{requested, oldReadOnly, leaseHolder("c-2"), leaseRenewed(t0)},
			want{kind: Wait, op: SwitchoverOperation, reason: "finish its promotion"}},
		{"a switchover is not aborted while the target may have promoted (no Lease, target unreachable)",
			[]change{late, leaseOff, oldReadOnly, on("c-2", unreachable)},
			want{kind: Blocked, step: NoStep, reason: "cannot be told"}},
	} {
		t.Run(tc.name, func(t *testing.T) { check(t, build(tc.changes...), tc.want) })
	}
}
