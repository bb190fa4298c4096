package semisync

import (
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestDecideFallback(t *testing.T) {
	const (
		pref = v1alpha1.DataDurabilityPreferred
		req  = v1alpha1.DataDurabilityRequired
	)
	// waiting is a primary under durability d whose oldest commit has waited wait, with a fresh
	// Lease, the count 2 and no replica connected.
	waiting := func(d v1alpha1.DataDurability, wait time.Duration) FallbackInput {
		return FallbackInput{Enabled: true, Durability: d, FallbackAfter: 2 * time.Second, Primary: true, LeaseFresh: true,
			SourceEnabled: true, WaitForReplicaCount: 2, AckWaiters: 3, LongestAckWait: wait}
	}
	with := func(in FallbackInput, f func(*FallbackInput)) FallbackInput { f(&in); return in }
	// fallenBack is a primary whose manager fell back, with clients semi-sync replicas
	// connected, dumps dump threads, caughtUp of them idle.
	fallenBack := func(d v1alpha1.DataDurability, clients, dumps, caughtUp int) FallbackInput {
		return FallbackInput{Enabled: true, Durability: d, FallbackAfter: 2 * time.Second, Primary: true, FallenBack: true,
			WaitForReplicaCount: 2, Clients: clients, Dumps: dumps, CaughtUpDumps: caughtUp}
	}
	for _, tc := range []struct {
		rule  string
		in    FallbackInput
		want  FallbackAction
		count int
	}{
		{"semi-sync disabled in the spec: nothing to do",
			with(waiting(req, time.Minute), func(in *FallbackInput) { in.Enabled = false }), FallbackNone, 0},
		{"semi-sync disabled in the spec after a fallback: the fallback is forgotten",
			with(fallenBack(req, 0, 0, 0), func(in *FallbackInput) { in.Enabled = false }), FallbackForget, 0},
		{"a replica does not fall back",
			with(waiting(req, time.Minute), func(in *FallbackInput) { in.Primary = false }), FallbackNone, 0},
		{"a demoted primary forgets its fallback",
			with(fallenBack(req, 0, 0, 0), func(in *FallbackInput) { in.Primary = false }), FallbackForget, 0},
		{"no commit waiting: nothing to do",
			with(waiting(req, 0), func(in *FallbackInput) { in.AckWaiters = 0 }), FallbackNone, 0},
		{"a commit waiting less than timeoutMillis keeps waiting", waiting(req, time.Second), FallbackNone, 0},
		{"a commit the processlist shows at timeoutMillis may have waited a second less: it keeps waiting",
			waiting(req, 2*time.Second), FallbackNone, 0},
		{"required: a commit surely waiting timeoutMillis under a fresh Lease is released (fall back to async)",
			waiting(req, 3*time.Second), FallbackRelease, 0},
		{"required: without a fresh Lease the commit keeps waiting, however long",
			with(waiting(req, time.Hour), func(in *FallbackInput) { in.LeaseFresh = false }), FallbackNone, 0},
		{"preferred: without a fresh Lease the commit keeps waiting, however long",
			with(waiting(pref, time.Hour), func(in *FallbackInput) { in.LeaseFresh = false; in.Clients = 1 }), FallbackNone, 0},
		{"preferred: with some semi-sync replicas connected, the count is lowered to them first",
			with(waiting(pref, 3*time.Second), func(in *FallbackInput) { in.Clients = 1 }), FallbackLowerCount, 1},
		{"preferred: with no semi-sync replica connected, fall back to async",
			waiting(pref, 3*time.Second), FallbackRelease, 0},
		{"preferred: a count already at the connected replicas that still waits falls back to async",
			with(waiting(pref, 3*time.Second), func(in *FallbackInput) { in.Clients, in.WaitForReplicaCount = 1, 1 }), FallbackRelease, 0},
		{"probe: re-enabled after a fallback with no commit acknowledged since, a commit surely waiting ProbeWait is released",
			with(waiting(req, 2*time.Second), func(in *FallbackInput) { in.Probing = true }), FallbackRelease, 0},
		{"probe under preferred with fewer replicas connected than the count: the count is lowered to them, not the source side switched off",
			with(waiting(pref, 2*time.Second), func(in *FallbackInput) { in.Probing, in.Clients = true, 1 }), FallbackLowerCount, 1},
		{"probe: a commit waiting less than ProbeWait (as the processlist shows it) keeps waiting",
			with(waiting(req, time.Second), func(in *FallbackInput) { in.Probing = true }), FallbackNone, 0},
		{"probe: without a fresh Lease the probe's commit keeps waiting too",
			with(waiting(req, time.Hour), func(in *FallbackInput) { in.Probing, in.LeaseFresh = true, false }), FallbackNone, 0},
		{"no probe: the same wait of 2 s is under timeoutMillis and keeps waiting",
			waiting(req, 2*time.Second), FallbackNone, 0},
		{"after a failed probe the source side stays off until ReenableAfter, even with replicas looking caught up",
			with(fallenBack(req, 2, 2, 2), func(in *FallbackInput) { in.Now, in.ReenableAfter = time.Unix(100, 0), time.Unix(105, 0) }), FallbackNone, 0},
		{"after a failed probe, once ReenableAfter has come, the source side is turned on again",
			with(fallenBack(req, 2, 2, 2), func(in *FallbackInput) { in.Now, in.ReenableAfter = time.Unix(105, 0), time.Unix(105, 0) }), FallbackReenable, 0},
		{"required never lowers the count",
			with(waiting(req, 3*time.Second), func(in *FallbackInput) { in.Clients = 1 }), FallbackRelease, 0},
		{"the source side off without a fallback is the role pass's to turn on",
			with(waiting(req, time.Minute), func(in *FallbackInput) { in.SourceEnabled = false }), FallbackNone, 0},
		{"fallen back, the source side turned on by someone else: the fallback is forgotten",
			with(fallenBack(req, 2, 2, 2), func(in *FallbackInput) { in.SourceEnabled = true }), FallbackForget, 0},
		{"required: fallen back with fewer semi-sync replicas than the count: stay asynchronous",
			fallenBack(req, 1, 1, 1), FallbackNone, 0},
		{"required: fallen back, the count of semi-sync replicas connected and caught up: semi-sync back on",
			fallenBack(req, 2, 2, 2), FallbackReenable, 0},
		{"fallen back, semi-sync replicas connected but still receiving: stay asynchronous",
			fallenBack(req, 2, 2, 1), FallbackNone, 0},
		{"an asynchronous replica caught up does not count for a semi-sync one still receiving",
			fallenBack(pref, 1, 2, 1), FallbackNone, 0},
		{"preferred: fallen back, one semi-sync replica connected and caught up: semi-sync back on",
			fallenBack(pref, 1, 2, 2), FallbackReenable, 0},
		{"preferred: fallen back with no semi-sync replica connected: stay asynchronous",
			fallenBack(pref, 0, 1, 1), FallbackNone, 0},
		{"maxSyncReplicas: a non-participant connected and caught up does not bring semi-sync back",
			with(fallenBack(req, 0, 1, 1), func(in *FallbackInput) { in.WaitForReplicaCount = 1 }), FallbackNone, 0},
		{"maxSyncReplicas: preferred never lowers the count to a non-participant that is connected",
			with(waiting(pref, 3*time.Second), func(in *FallbackInput) { in.Dumps, in.CaughtUpDumps = 1, 1 }), FallbackRelease, 0},
		{"turning semi-sync back on needs no Lease: it only makes commits wait",
			with(fallenBack(req, 2, 2, 2), func(in *FallbackInput) { in.LeaseFresh = false }), FallbackReenable, 0},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got := DecideFallback(tc.in)
			if got.Action != tc.want || got.Count != tc.count || got.Reason == "" {
				t.Errorf("DecideFallback = %+v (%s); want %s, count %d, with a reason", got, got.Action, tc.want, tc.count)
			}
		})
	}
}

func TestNextReenableBackoff(t *testing.T) {
	got := []time.Duration{}
	d := time.Duration(0)
	for range 6 {
		d = NextReenableBackoff(d)
		got = append(got, d)
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("backoffs %v, want %v (doubling from 5 s, at most a minute)", got, want)
		}
	}
}
