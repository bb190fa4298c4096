package instance

import "time"

// The primary Lease's timing, in one place. The seed's "renew every 30 s" with a 15 s TTL cannot
// hold a Lease: the renewal period must be well inside the TTL, so that one lost renewal is not
// yet a lost Lease.
const (
	// LeaseTTL is the Lease's leaseDurationSeconds: once this long has passed since its last
	// renewal, the Lease is expired and another instance may take it over.
	LeaseTTL = 15 * time.Second
	// LeaseRenewInterval is how often the holder renews: three attempts fit in one TTL.
	LeaseRenewInterval = 5 * time.Second
	// LeaseSafetyMargin is how long before its Lease could expire a primary that has not renewed
	// turns itself read-only. It covers the time to turn super_read_only on and end the open
	// client sessions, the delay between sending a renewal and the API server recording it, and
	// the drift between this instance's clock and the clock of whoever judges the expiry.
	LeaseSafetyMargin = 3 * time.Second
	// LeaseRequestTimeout bounds one request about the Lease to the API server, so that a hung
	// connection does not delay the next renewal.
	LeaseRequestTimeout = 4 * time.Second
	// LeaseCheckInterval is how often the holder compares the clock with its self-fencing
	// deadline: the server turns read-only at most this long after the deadline.
	LeaseCheckInterval = 250 * time.Millisecond
)
