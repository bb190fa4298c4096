package instance

import (
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

func TestMayTakeLease(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	// me is instance c-1 in its Pod uid-b; Leases name other instances without a Pod UID.
	me := failover.LeaseHolder{Instance: "c-1", PodUID: "uid-b"}
	held := func(holder string, renewedAgo, observedAgo time.Duration) LeaseRecord {
		h := failover.ParseLeaseHolder(holder)
		return LeaseRecord{Exists: true, Holder: h.Instance, HolderPodUID: h.PodUID, RenewTime: now.Add(-renewedAgo), Duration: LeaseTTL,
			ObservedAt: now.Add(-observedAgo)}
	}
	for _, tc := range []struct {
		name  string
		lease LeaseRecord
		want  bool
		until time.Time
	}{
		{"no Lease: create it", LeaseRecord{}, true, time.Time{}},
		{"held by this instance: renew it, even expired", held("c-1/uid-b", time.Hour, time.Hour), true, time.Time{}},
		{"held by this instance: renew it while fresh", held("c-1/uid-b", time.Second, time.Second), true, time.Time{}},
		{"held by an earlier Pod of this instance (recreated under its name): refused until it expires",
			held("c-1/uid-a", time.Second, time.Second), false, now.Add(LeaseTTL - time.Second)},
		{"held by an earlier Pod of this instance, expired: take it over", held("c-1/uid-a", LeaseTTL, LeaseTTL), true, time.Time{}},
		{"held by this instance's name without a Pod UID (an older instance manager): refused until it expires",
			held("c-1", time.Second, time.Second), false, now.Add(LeaseTTL - time.Second)},
		{"released (no holder): take it", LeaseRecord{Exists: true, Duration: LeaseTTL}, true, time.Time{}},
		{"held by another, renewTime ahead of the sighting within the allowed skew: refused until renewTime plus the duration",
			held("c-2", LeaseTTL-time.Second, LeaseTTL-time.Second+failover.LeaseMaxClockSkew), false, now.Add(time.Second)},
		{"held by another, first seen (by the periodic read) less than its duration ago: refused until that sighting plus the duration",
			held("c-2", time.Hour, LeaseTTL-300*time.Millisecond), false, now.Add(300 * time.Millisecond)},
		{"held by another, expired on both clocks: take it over", held("c-2", LeaseTTL, LeaseTTL), true, time.Time{}},
		{"held by another, expired by renewTime but seen unchanged for less than its duration: refused (the wall clocks may disagree)",
			held("c-2", time.Hour, LeaseTTL-time.Second), false, time.Time{}},
		{"held by another, renewTime in the future beyond the allowed skew counts as observed: take it over once seen unchanged for its duration",
			held("c-2", -time.Hour, LeaseTTL), true, time.Time{}},
		{"held by another, renewTime in the future beyond the allowed skew counts as observed: refused until the sighting plus the duration",
			held("c-2", -time.Hour, LeaseTTL-time.Second), false, now.Add(time.Second)},
		{"held by another, never observed: refused", LeaseRecord{Exists: true, Holder: "c-2", RenewTime: now.Add(-time.Hour), Duration: LeaseTTL}, false, time.Time{}},
		{"held by another without a duration: refused", LeaseRecord{Exists: true, Holder: "c-2", RenewTime: now.Add(-time.Hour), ObservedAt: now.Add(-time.Hour)}, false, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MayTakeLease(tc.lease, me, now)
			if got.Allowed != tc.want || got.Reason == "" {
				t.Errorf("MayTakeLease = %+v, want allowed %v with a reason", got, tc.want)
			}
			if !tc.until.IsZero() && !got.Until.Equal(tc.until) {
				t.Errorf("until %s, want %s", got.Until, tc.until)
			}
		})
	}
}

func TestLeaseTimingHoldsTheLease(t *testing.T) {
	if LeaseRenewInterval+LeaseRequestTimeout >= LeaseTTL-LeaseSafetyMargin {
		t.Errorf("a renewal sent after %s that hangs for its %s timeout leaves no second attempt before the self-fence at %s",
			LeaseRenewInterval, LeaseRequestTimeout, LeaseTTL-LeaseSafetyMargin)
	}
	if LeaseSafetyMargin <= LeaseCheckInterval {
		t.Errorf("the margin %s does not cover the check interval %s", LeaseSafetyMargin, LeaseCheckInterval)
	}
}

func TestDecideLeaseStep(t *testing.T) {
	sent := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	deadline := sent.Add(LeaseTTL - LeaseSafetyMargin)
	for _, tc := range []struct {
		name string
		c    LeaseClock
		want LeaseStep
	}{
		{"no Lease held: nothing to do", LeaseClock{Now: sent.Add(time.Hour)}, LeaseIdle},
		{"just renewed: nothing to do", LeaseClock{Now: sent.Add(time.Second), Held: true, LastRenewSent: sent}, LeaseIdle},
		{"renewal due after the renew interval", LeaseClock{Now: sent.Add(LeaseRenewInterval), Held: true, LastRenewSent: sent}, LeaseRenew},
		{"renewal still due after a failed one", LeaseClock{Now: sent.Add(LeaseRenewInterval + LeaseRequestTimeout), Held: true, LastRenewSent: sent}, LeaseRenew},
		{"a renewal in flight is not sent twice", LeaseClock{Now: sent.Add(LeaseRenewInterval), Held: true, LastRenewSent: sent, RenewInFlight: true}, LeaseIdle},
		{"just before the deadline: still renewing, not fenced", LeaseClock{Now: deadline.Add(-time.Millisecond), Held: true, LastRenewSent: sent}, LeaseRenew},
		{"at the deadline (TTL minus the margin after the last renewal SENT): self-fence", LeaseClock{Now: deadline, Held: true, LastRenewSent: sent}, LeaseSelfFence},
		{"at the deadline a renewal in flight does not delay the self-fence", LeaseClock{Now: deadline, Held: true, LastRenewSent: sent, RenewInFlight: true}, LeaseSelfFence},
		{"long past the deadline: self-fence", LeaseClock{Now: sent.Add(time.Hour), Held: true, LastRenewSent: sent}, LeaseSelfFence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecideLeaseStep(tc.c); got != tc.want {
				t.Errorf("DecideLeaseStep = %s, want %s", got, tc.want)
			}
		})
	}
	if !deadline.Before(sent.Add(LeaseTTL)) {
		t.Error("the self-fence deadline is not before the Lease can expire")
	}
}

// TestNoteSighting: when an instance first saw each version of the Lease, which MayTakeLease's
// "unchanged for its duration on this instance's clock" counts from.
func TestNoteSighting(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0.Add(10 * time.Second)
	v := func(holder string, renewed time.Time) LeaseRecord {
		return LeaseRecord{Exists: true, Holder: holder, RenewTime: renewed, Duration: LeaseTTL}
	}
	seen := LeaseSighting{Holder: "c-1", RenewTime: t0, At: t0.Add(time.Second)}
	for _, tc := range []struct {
		name string
		prev LeaseSighting
		rec  LeaseRecord
		want LeaseSighting
	}{
		{"the same version read again keeps its first sighting: the TTL counts from when it was first seen, not from when the instance became the target",
			seen, v("c-1", t0), seen},
		{"a renewal is a new version: counted from now",
			seen, v("c-1", t0.Add(5*time.Second)), LeaseSighting{Holder: "c-1", RenewTime: t0.Add(5 * time.Second), At: now}},
		{"a new holder with the same renewTime is a new version: counted from now",
			seen, v("c-2", t0), LeaseSighting{Holder: "c-2", RenewTime: t0, At: now}},
		{"a released Lease (no holder) is a new version",
			seen, v("", t0), LeaseSighting{RenewTime: t0, At: now}},
		{"the first Lease seen is counted from now",
			LeaseSighting{}, v("c-1", t0), LeaseSighting{Holder: "c-1", RenewTime: t0, At: now}},
		{"no Lease: nothing is remembered, a Lease created again is counted from when it is seen",
			seen, LeaseRecord{}, LeaseSighting{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NoteSighting(tc.prev, tc.rec, now); got != tc.want {
				t.Errorf("NoteSighting = %+v, want %+v", got, tc.want)
			}
		})
	}
}
