package failover

import (
	"testing"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// caughtUp: the operator recorded c-1 read-only with executed a:1-12, for this failure and the
// Lease's record.
func caughtUp(set string) change {
	return func(o *Observation) {
		o.Status.FallbackCaughtUp = &FallbackCaughtUp{FormerPrimary: "c-1", FailingSince: o.Status.PrimaryFailingSince,
			FellBackAt: o.Lease.Fallback.FellBackAt, GTIDSet: a(set)}
	}
}

// fellBackToTheNanosecond dates the Lease's fallback record to the nanosecond, as the instance
// manager writes it.
func fellBackToTheNanosecond(o *Observation) {
	o.Lease.Fallback.FellBackAt = o.Lease.Fallback.FellBackAt.Add(206411765 * time.Nanosecond)
}

// readBackFromTheAPI: the status record as the API server returns it, its times in whole seconds
// (metav1.Time).
func readBackFromTheAPI(o *Observation) {
	if c := o.Status.FallbackCaughtUp; c != nil {
		c.FellBackAt, c.FailingSince = c.FellBackAt.Truncate(time.Second), c.FailingSince.Truncate(time.Second)
	}
}

func TestFallbackCaughtUpUnblocks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []change
		want    want
	}{
		{"the old primary seen read-only with everything on the candidate: no block once it no longer answers",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), caughtUp("1-10")},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"a proof read back from the status in whole seconds dates a Lease record kept to the nanosecond",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), fellBackToTheNanosecond,
				caughtUp("1-10"), readBackFromTheAPI},
			want{kind: Failover, step: StepSetTargetPrimary, instance: "c-2"}},
		{"the candidate lacks part of what the old primary had executed: still blocked",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), caughtUp("1-12")},
			want{kind: Blocked, op: FailoverOperation, reason: "may exist on it alone"}},
		{"a proof for an earlier failure does not count",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), caughtUp("1-10"),
				func(o *Observation) { o.Status.FallbackCaughtUp.FailingSince = t0.Add(-time.Hour) }},
			want{kind: Blocked, op: FailoverOperation, reason: "may exist on it alone"}},
		{"a proof for an earlier fallback does not count",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false), caughtUp("1-10"),
				func(o *Observation) { o.Status.FallbackCaughtUp.FellBackAt = t0.Add(-time.Hour) }},
			want{kind: Blocked, op: FailoverOperation, reason: "may exist on it alone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check(t, build(tc.changes...), tc.want)
		})
	}
}

func TestNextFallbackCaughtUp(t *testing.T) {
	readOnlyOld := on("c-1", func(in *Instance) { readOnly(in); in.Executed = a("1-12") })
	for _, tc := range []struct {
		name     string
		changes  []change
		wantKeep bool
		wantSet  string // "" for no record
	}{
		{"failing, a fallback at risk, the old primary answering read-only: its gtid_executed is recorded",
			[]change{failingSince(t0.Add(-time.Minute)), fallbackRecord("c-1", false), readOnlyOld}, false, "1-12"},
		{"the same proof already recorded: kept as it is",
			[]change{failingSince(t0.Add(-time.Minute)), fallbackRecord("c-1", false), readOnlyOld, caughtUp("1-12")}, true, "1-12"},
		{"the same proof read back from the status in whole seconds: kept as it is",
			[]change{failingSince(t0.Add(-time.Minute)), fallbackRecord("c-1", false), fellBackToTheNanosecond, readOnlyOld,
				caughtUp("1-12"), readBackFromTheAPI}, true, "1-12"},
		{"the old primary no longer answers: the proof stays",
			[]change{failingSince(t0.Add(-time.Minute)), fallbackRecord("c-1", false), caughtUp("1-12"), on("c-1", noPod)}, true, "1-12"},
		{"the old primary seen accepting writes again: the proof goes",
			[]change{failingSince(t0.Add(-time.Minute)), fallbackRecord("c-1", false), caughtUp("1-12")}, false, ""},
		{"no failure recorded: no proof",
			[]change{fallbackRecord("c-1", false), readOnlyOld}, true, ""},
		{"the record resumed: no proof needed",
			[]change{failingSince(t0.Add(-time.Minute)), fallbackRecord("c-1", true), readOnlyOld}, true, ""},
		{"the old primary no longer answers: a proof read back in whole seconds stays",
			[]change{failingSince(t0.Add(-time.Minute)), fallbackRecord("c-1", false), fellBackToTheNanosecond, caughtUp("1-12"),
				readBackFromTheAPI, on("c-1", noPod)}, true, "1-12"},
		{"a proof of another failure is dropped",
			[]change{failingSince(t0.Add(-time.Minute)), fallbackRecord("c-1", false), caughtUp("1-12"), on("c-1", noPod),
				func(o *Observation) { o.Status.FallbackCaughtUp.FailingSince = t0.Add(-time.Hour) }}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next, keep := NextFallbackCaughtUp(build(tc.changes...))
			got := ""
			if next != nil {
				got = next.GTIDSet.String()
			}
			want := ""
			if tc.wantSet != "" {
				want = a(tc.wantSet).String()
			}
			if keep != tc.wantKeep || got != want {
				t.Errorf("NextFallbackCaughtUp = %q, keep %v; want %q, keep %v", got, keep, want, tc.wantKeep)
			}
		})
	}
}
