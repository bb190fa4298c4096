package failover

import "time"

// Timing of the primary Lease <cluster>-primary, for the instances and the operator alike.
//
// The holder renews every LeaseRenewInterval, so a renewal can fail (an API server hiccup, a
// conflict, one that hangs for its request timeout) and the next one still lands before the
// holder must self-fence. A holder that has not renewed successfully for LeaseSelfFenceAfter
// (counted on its own monotonic clock from when it sent its last successful renewal) sets
// super_read_only and ends the client sessions already open, those whose commit waits for a
// semi-sync acknowledgement included, so none of them can still commit or be acknowledged. That is
// LeaseSelfFenceMargin before the TTL: the margin covers how often the holder checks its deadline
// and the time to turn read-only and end the sessions. Clock skew is not in it: the operator
// measures the expiry on its own clock, from when it saw the renewal (LeaseExpiry, as client-go's
// leader election does), which is after the holder sent it. Once LeaseExpired is true, the holder
// has therefore stopped writing even when nobody can reach it, and a replica may be promoted.
//
// The seed's "renew every 30 s" with a 15 s TTL could not keep a Lease held; these values can.
const (
	LeaseTTL             = 15 * time.Second
	LeaseRenewInterval   = 5 * time.Second
	LeaseSelfFenceAfter  = 10 * time.Second
	LeaseSelfFenceMargin = LeaseTTL - LeaseSelfFenceAfter
)

// LeaseMaxClockSkew is how far ahead of the operator's clock (of the candidate's, for an
// instance) a holder's clock may run and still have its renewTime believed. renewTime is never
// needed for safety: the operator first sees a renewal after the holder sent it, so its TTL
// counted from that sighting ends after the holder's self-fence. It only lengthens the wait when
// the holder's clock runs a little ahead, as `kubectl get lease` shows it. Beyond this a renewTime
// cannot be right (a broken clock, or a write by someone else), and believing it would delay a
// failover for as long as it lies in the future: it counts as the sighting itself. Nodes kept by
// NTP agree within milliseconds; 2 s still admits a clock that is plainly off, and keeps what a
// renewTime can add to a failover small beside the TTL (a frozen primary is to be replaced within
// 20 s, and the TTL alone takes 15).
const LeaseMaxClockSkew = 2 * time.Second

// LeaseExpiry is when l stops protecting its holder, on the operator's clock: its TTL (LeaseTTL
// when the Lease records none) after the operator saw its holder or renewTime last change
// (ObservedAt), and never before its TTL after renewTime when renewTime is at most
// LeaseMaxClockSkew ahead of that sighting. renewTime is written with the holder's clock: a holder
// whose clock runs behind the operator's writes a renewTime in the operator's past, which alone
// would make a live Lease look expired early; measured from the operator's own observation, the
// TTL cannot have passed before it has on the holder's side. A holder whose clock runs ahead
// writes a renewTime in the future, which makes the wait longer by the skew, up to
// LeaseMaxClockSkew; a renewTime further ahead counts as the sighting, so no Lease delays a
// failover by more than its TTL plus that skew after it was last seen to change. An unobserved
// Lease (zero ObservedAt) never expires.
func LeaseExpiry(l Lease) time.Time {
	ttl := l.TTL
	if ttl <= 0 {
		ttl = LeaseTTL
	}
	if l.ObservedAt.IsZero() {
		return time.Unix(1<<62, 0)
	}
	observed := l.ObservedAt.Add(ttl)
	ahead := l.RenewTime.Sub(l.ObservedAt)
	if ahead > 0 && ahead <= LeaseMaxClockSkew {
		return l.RenewTime.Add(ttl)
	}
	return observed
}

// LeaseObserver remembers when the operator first saw each Lease's holder and renewTime, on its
// own clock, so that LeaseExpiry does not depend on the holder's clock. Use one per operator
// process; the zero value is ready. It is not safe for concurrent use.
type LeaseObserver struct {
	seen map[string]leaseSighting
}

type leaseSighting struct {
	holder LeaseHolder
	renew  time.Time
	at     time.Time
}

// Observe returns l, read now, with ObservedAt set: now when its holder (instance or Pod) or
// renewTime differs from what was last seen under key (or nothing was), else when that was first
// seen. After an operator restart every Lease is first seen again, so its expiry is pushed back,
// never forward.
func (o *LeaseObserver) Observe(key string, l Lease, now time.Time) Lease {
	if !l.Exists {
		delete(o.seen, key)
		return l
	}
	if o.seen == nil {
		o.seen = map[string]leaseSighting{}
	}
	holder := LeaseHolder{Instance: l.Holder, PodUID: l.HolderPodUID}
	s, ok := o.seen[key]
	if !ok || s.holder != holder || !s.renew.Equal(l.RenewTime) {
		s = leaseSighting{holder: holder, renew: l.RenewTime, at: now}
		o.seen[key] = s
	}
	l.ObservedAt = s.at
	return l
}

// Last returns the Lease last observed under key (holder, renewTime and when that was first seen;
// not its TTL), and whether one was: what the previous read said, without reading again.
func (o *LeaseObserver) Last(key string) (Lease, bool) {
	s, ok := o.seen[key]
	if !ok {
		return Lease{}, false
	}
	return Lease{Exists: true, Holder: s.holder.Instance, HolderPodUID: s.holder.PodUID, RenewTime: s.renew, ObservedAt: s.at}, true
}

// LeaseExpired reports whether l no longer protects any holder at now: it does not exist, names
// no holder, or its TTL has passed since its last renewal.
func LeaseExpired(l Lease, now time.Time) bool {
	return !l.Exists || l.Holder == "" || !now.Before(LeaseExpiry(l))
}

// LeaseLiveFor reports whether l is held, unexpired, by someone other than instance: while it
// is, that holder may still accept writes, and instance must not be promoted.
func LeaseLiveFor(l Lease, instance string, now time.Time) bool {
	return !LeaseExpired(l, now) && l.Holder != instance
}
