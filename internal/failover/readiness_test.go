package failover

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestAssessReadiness: one row per rule of AssessReadiness, on the healthy fixture changed as the
// rule needs.
func TestAssessReadiness(t *testing.T) {
	writable := func(in *Instance) { in.Role, in.ReadOnly, in.SuperReadOnly = v1.RolePrimary, false, false }
	sqlStopped := func(in *Instance) { in.Replication.SQLRunning = false }
	for _, tc := range []struct {
		name      string
		changes   []change
		safe      bool
		reason    string
		candidate string
		message   string // a part of the message
	}{
		{"a healthy Cluster: the earliest of the replicas holding the most complete history would be promoted", nil,
			true, ReadinessCandidateReady, "c-2", "promote c-2"},
		{"no established primary: nothing to fail over from",
			[]change{func(o *Observation) { o.Status.CurrentPrimary, o.Status.TargetPrimary = "", "" }},
			false, ReadinessNoPrimary, "", "no established primary"},
		{"several instances accept writes: nothing is promoted",
			[]change{on("c-2", writable)}, false, ReadinessSeveralWriters, "", "c-1, c-2"},
		{"a primary change under way: its target, not a new failover",
			[]change{func(o *Observation) { o.Status.TargetPrimary = "c-3" }}, false, ReadinessPrimaryChangeUnderWay, "c-3", "from c-1 to c-3"},
		{"a fenced primary: no failover starts",
			[]change{func(o *Observation) { o.Status.Fenced = []string{"c-1"} }}, false, ReadinessPrimaryFenced, "", "fence off"},
		{"a single instance: no replica to fail over to",
			[]change{func(o *Observation) { o.Spec.Instances, o.Instances = 1, o.Instances[:1] }}, false, ReadinessNoReplica, "", "only instance"},
		{"every replica fenced or diverged: no candidate",
			[]change{func(o *Observation) { o.Status.Fenced, o.Status.Diverged = []string{"c-2"}, []string{"c-3"} }},
			false, ReadinessNoCandidate, "", "c-2 (fenced), c-3 (diverged)"},
		{"no candidate holds what an ineligible replica holds: promoting would lose it",
			[]change{on("c-2", sqlStopped), on("c-2", history(a("1-12"))), on("c-1", executed(a("1-12")))},
			false, ReadinessNoCandidate, "", "c-2 holds transactions the best eligible replica c-3 lacks"},
		{"the eligible replicas' histories diverge: no candidate",
			[]change{on("c-2", history(set(a("1-10"), b("1")))), on("c-3", history(a("1-11")))},
			false, ReadinessNoCandidate, "", "diverge"},
		{"a semi-sync participant did not answer: no candidate until it does or is fenced",
			[]change{semiSyncOn(v1.DataDurabilityRequired), on("c-3", unreachable)},
			false, ReadinessNoCandidate, "", "participant c-3 did not answer"},
		{"a recorded semi-sync fallback under required: a failover would be blocked",
			[]change{semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), on("c-1", executed(a("1-12")))},
			false, ReadinessSemiSyncFallback, "c-2", "would be blocked until c-1 comes back"},
		{"a recorded semi-sync fallback under preferred: a failover would go on and may lose writes",
			[]change{semiSyncOn(v1.DataDurabilityPreferred), fallbackRecord("c-1", false), on("c-1", executed(a("1-12")))},
			false, ReadinessSemiSyncFallback, "c-2", "may be lost"},
		{"a fallback reported without the Lease: a failover would be blocked",
			[]change{semiSyncOn(v1.DataDurabilityRequired), func(o *Observation) { o.Spec.EnablePrimaryLease, o.Status.SemiSyncFallenBack = false, true },
				on("c-1", executed(a("1-12")))},
			false, ReadinessSemiSyncFallback, "c-2", "would be blocked"},
		{"a fallback that resumed: nothing acknowledged is on the primary alone",
			[]change{semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", true), on("c-1", executed(a("1-12")))},
			true, ReadinessCandidateReady, "c-2", "promote c-2"},
		{"semi-sync on, the candidate lacks only unacknowledged commits: safe",
			[]change{semiSyncOn(v1.DataDurabilityRequired), on("c-1", executed(a("1-12")))},
			true, ReadinessCandidateReady, "c-2", "promote c-2"},
		{"semi-sync off and the candidate lacks committed transactions: they would be lost",
			[]change{on("c-1", executed(a("1-12")))}, false, ReadinessAsyncCandidateBehind, "c-2", "lacks 2 transaction(s)"},
		{"a candidate with received transactions to apply: safe once it applies them",
			[]change{on("c-3", retrieved(a("1-12"))), on("c-1", executed(a("1-12")))},
			true, ReadinessCandidateReady, "c-3", "applies the 2 transaction(s)"},
		{"the primary does not answer: the failover rules still find the candidate",
			[]change{on("c-1", unreachable)}, true, ReadinessCandidateReady, "c-2", "promote c-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AssessReadiness(build(tc.changes...))
			if got.Safe != tc.safe || got.Reason != tc.reason || got.Candidate != tc.candidate || !strings.Contains(got.Message, tc.message) {
				t.Errorf("AssessReadiness = %+v, want safe %v, reason %s, candidate %q, a message with %q", got, tc.safe, tc.reason, tc.candidate, tc.message)
			}
		})
	}
}

// TestAssessReadinessAgreesWithDecide: for a primary failing past failoverDelay, the assessment
// is safe exactly when the failover decision goes on, and unsafe when it is blocked.
func TestAssessReadinessAgreesWithDecide(t *testing.T) {
	o := build(on("c-1", unreachable), failingSince(t0.Add(-time.Minute)))
	got := AssessReadiness(o)
	d := Decide(o)
	if !got.Safe || d.Kind == Blocked {
		t.Fatalf("readiness %+v, decision %+v: a failover that would proceed is safe", got, d)
	}
	blocked := build(on("c-1", unreachable), failingSince(t0.Add(-time.Minute)), func(o *Observation) { o.Status.Fenced = []string{"c-2", "c-3"} })
	if r, d := AssessReadiness(blocked), Decide(blocked); r.Safe || d.Kind != Blocked {
		t.Fatalf("readiness %+v, decision %+v: a blocked failover is not safe", r, d)
	}
}
