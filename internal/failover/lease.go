package failover

import "time"

// Timing of the primary Lease <cluster>-primary.
//
// The holder renews every LeaseRenewInterval, so a renewal can fail (an API server hiccup, a
// conflict) and the next one still lands before the holder must self-fence. A holder that has not renewed successfully for LeaseSelfFenceAfter
// (counted on its own clock from the start of its last successful renewal) sets super_read_only
// and ends the client sessions already open, so none of them can still commit. That is
// LeaseSelfFenceMargin before the Lease can be seen expired by the operator: the margin covers
// the time to turn read-only and kill the sessions, plus clock skew between the holder's node and
// the operator (renewTime is written with the holder's clock, and the operator compares it with
// its own). Once LeaseExpired is true, the holder has therefore stopped writing even when nobody
// can reach it, and a replica may be promoted.
//
// The seed's "renew every 30 s" with a 15 s TTL could not keep a Lease held; these values can.
const (
	LeaseTTL             = 15 * time.Second
	LeaseRenewInterval   = 5 * time.Second
	LeaseSelfFenceAfter  = 10 * time.Second
	LeaseSelfFenceMargin = LeaseTTL - LeaseSelfFenceAfter
)

// LeaseExpiry is when l stops protecting its holder: its last renewal plus its TTL (LeaseTTL when
// the Lease records none).
func LeaseExpiry(l Lease) time.Time {
	ttl := l.TTL
	if ttl <= 0 {
		ttl = LeaseTTL
	}
	return l.RenewTime.Add(ttl)
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
