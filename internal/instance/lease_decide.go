package instance

import (
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// LeaseRecord is the primary Lease as the API server holds it, with when this instance first
// saw this version of it.
type LeaseRecord struct {
	// Exists is false when there is no Lease.
	Exists bool
	// Holder is the instance that holds it and HolderPodUID the UID of its Pod (empty in a Lease
	// written by an older instance manager): spec.holderIdentity, parsed by
	// failover.ParseLeaseHolder.
	Holder, HolderPodUID string
	// RenewTime is the holder's wall clock when it last renewed (the Lease's renewTime).
	RenewTime time.Time
	// Duration is the Lease's leaseDurationSeconds.
	Duration time.Duration
	// ObservedAt is this instance's clock when it first saw the Lease with this holder and
	// renewTime (zero: just now). Expiry is judged on both clocks: renewTime plus the duration
	// must have passed on this instance's wall clock, and the Lease must have stayed unchanged
	// for the duration on this instance's own (monotonic) clock, so that neither a skewed wall
	// clock nor a late observation can make a live Lease look expired.
	ObservedAt time.Time
}

// HeldBy reports whether the Lease names holder: the same instance and the same Pod.
func (l LeaseRecord) HeldBy(holder failover.LeaseHolder) bool {
	return l.Exists && l.Holder == holder.Instance && l.HolderPodUID == holder.PodUID
}

// HolderIdentity is the Lease's holderIdentity, as written.
func (l LeaseRecord) HolderIdentity() string {
	return failover.LeaseHolder{Instance: l.Holder, PodUID: l.HolderPodUID}.Identity()
}

// LeaseSighting is when this instance first saw one version of the Lease (its holder and
// renewTime), on its own monotonic clock.
type LeaseSighting struct {
	Holder, HolderPodUID string
	RenewTime            time.Time
	// At is zero when no Lease has been seen (or the last read found none).
	At time.Time
}

// NoteSighting returns the sighting after reading rec at now: prev when rec is the version prev
// saw, so that the time it was first seen stays; a sighting at now when rec is another version (a
// renewal, a new holder) or the first one seen; none when there is no Lease. Every instance reads
// the Lease every LeaseObserveInterval (PrimaryLease.Run), so a candidate has usually seen the
// holder's last renewal within that interval of it, long before it becomes the target: the
// TTL that MayTakeLease waits on this instance's clock counts from that first sighting, not from
// when the instance started to look. That is safe whenever it was seen: the holder sent that
// renewal before the API server stored it, and so before anyone could see it, and it self-fences
// LeaseSelfFenceAfter after sending its last successful renewal, well inside the TTL.
func NoteSighting(prev LeaseSighting, rec LeaseRecord, now time.Time) LeaseSighting {
	switch {
	case !rec.Exists:
		return LeaseSighting{}
	case prev.At.IsZero() || prev.Holder != rec.Holder || prev.HolderPodUID != rec.HolderPodUID || !prev.RenewTime.Equal(rec.RenewTime):
		return LeaseSighting{Holder: rec.Holder, HolderPodUID: rec.HolderPodUID, RenewTime: rec.RenewTime, At: now}
	}
	return prev
}

// LeaseTake is whether this instance may create or take over the Lease, and why.
type LeaseTake struct {
	Allowed bool
	Reason  string
	// Until, when the take is refused, is when it would be allowed if the Lease stays as it is
	// (zero: not known).
	Until time.Time
}

// MayTakeLease decides whether me (an instance and its Pod) may hold the Lease now: when there
// is none, when it names nobody or me, or when it has expired. Otherwise someone else may still
// be writing: another instance, or an earlier Pod of this one (recreated under the same name
// while the old one may still run on a cut-off node), or, for a Lease an older instance manager
// wrote without its Pod UID, a Pod of this instance that cannot be told apart from me. It is
// expired by the operator's rule (failover.LeaseExpiry), on this instance's clocks: its duration
// has passed since this instance first saw it unchanged, and since its renewTime unless that lies
// more than failover.LeaseMaxClockSkew ahead of the sighting (a renewTime that cannot be right
// delays nobody for ever).
func MayTakeLease(l LeaseRecord, me failover.LeaseHolder, now time.Time) LeaseTake {
	holder := l.HolderIdentity()
	switch {
	case !l.Exists:
		return LeaseTake{Allowed: true, Reason: "no Lease: create it"}
	case l.HeldBy(me):
		return LeaseTake{Allowed: true, Reason: "held by this instance: renew it"}
	case l.Holder == "":
		return LeaseTake{Allowed: true, Reason: "released: take it"}
	case l.Duration <= 0:
		return LeaseTake{Reason: "held by " + holder + " without a duration"}
	case l.ObservedAt.IsZero():
		return LeaseTake{Reason: "held by " + holder + ": first seen just now"}
	}
	until := failover.LeaseExpiry(failover.Lease{Exists: true, Holder: l.Holder, RenewTime: l.RenewTime,
		TTL: l.Duration, ObservedAt: l.ObservedAt})
	switch {
	case !now.Before(until):
		return LeaseTake{Allowed: true, Reason: "expired: take it over from " + holder}
	case until.After(l.ObservedAt.Add(l.Duration)):
		return LeaseTake{Reason: "held by " + holder + " until " + until.Format(time.RFC3339), Until: until}
	}
	return LeaseTake{Reason: "held by " + holder + ": not yet seen unchanged for its duration", Until: until}
}

// LeaseStep is what the holder's lease loop does next.
type LeaseStep int

const (
	// LeaseIdle: nothing to do (no Lease held, or the next renewal is not due).
	LeaseIdle LeaseStep = iota
	// LeaseRenew: send a renewal now.
	LeaseRenew
	// LeaseSelfFence: the last successful renewal is too old; turn read-only before the Lease
	// can expire, and end the open client sessions.
	LeaseSelfFence
)

func (s LeaseStep) String() string { return [...]string{"idle", "renew", "self-fence"}[s] }

// LeaseClock is the holder's state as the lease loop sees it. Times are the instance's own
// clock (monotonic in production).
type LeaseClock struct {
	Now time.Time
	// Held: a creation or renewal succeeded and the Lease was not released, lost or given up by
	// a self-fence since.
	Held bool
	// LastRenewSent is when the last successful creation or renewal was sent (not answered:
	// the API server may have recorded it any time after it was sent).
	LastRenewSent time.Time
	// RenewInFlight: a renewal was sent and has not been answered yet.
	RenewInFlight bool
}

// SelfFenceDeadline is when a holder that last renewed successfully at sent must be read-only.
func SelfFenceDeadline(sent time.Time) time.Time {
	return sent.Add(LeaseTTL - LeaseSafetyMargin)
}

// DecideLeaseStep decides the holder's next step: self-fence once the deadline passed (whatever
// renewal is under way), renew once LeaseRenewInterval passed since the last successful one.
func DecideLeaseStep(c LeaseClock) LeaseStep {
	switch {
	case !c.Held:
		return LeaseIdle
	case !c.Now.Before(SelfFenceDeadline(c.LastRenewSent)):
		return LeaseSelfFence
	case c.RenewInFlight:
		return LeaseIdle
	case !c.Now.Before(c.LastRenewSent.Add(LeaseRenewInterval)):
		return LeaseRenew
	}
	return LeaseIdle
}
