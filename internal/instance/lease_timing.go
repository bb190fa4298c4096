package instance

import (
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// The primary Lease's timing. The TTL, the renewal period and the self-fence deadline are the
// failover engine's (failover.LeaseTTL and the rest), so that the instance and the operator cannot
// disagree on them. The seed's "renew every 30 s" with a 15 s TTL cannot hold a Lease: the
// renewal period must be well inside the TTL, so that one lost renewal is not yet a lost Lease.
const (
	// LeaseTTL is the Lease's leaseDurationSeconds: once this long has passed since its last
	// renewal, the Lease is expired and another instance may take it over.
	LeaseTTL = failover.LeaseTTL
	// LeaseRenewInterval is how often the holder renews: three attempts fit in one TTL.
	LeaseRenewInterval = failover.LeaseRenewInterval
	// LeaseSafetyMargin is how long before its Lease could expire a primary that has not renewed
	// turns itself read-only (failover.LeaseSelfFenceMargin). It covers the time to turn
	// super_read_only on and end the open client sessions (up to three attempts of
	// fenceStatementTimeout) and LeaseCheckInterval. Clock skew is not in it: the operator
	// measures the expiry from when it saw the renewal, on its own clock (failover.LeaseExpiry),
	// and this instance measures its deadline on its own monotonic clock from before it sent it.
	LeaseSafetyMargin = failover.LeaseSelfFenceMargin
	// LeaseRequestTimeout bounds one request about the Lease to the API server, so that a hung
	// connection does not delay the next renewal.
	LeaseRequestTimeout = 4 * time.Second
	// LeaseCheckInterval is how often the holder compares the clock with its self-fencing
	// deadline: the server turns read-only at most this long after the deadline.
	LeaseCheckInterval = 250 * time.Millisecond
	// LeaseObserveInterval is how often an instance that does not hold the Lease reads it, to
	// note when it first saw each renewal (NoteSighting): a candidate then waits the TTL from
	// at most this long (plus a read) after the holder's last renewal, instead of from when it
	// became the target. One GET of one object per interval and instance, like the role
	// reconciler's read of the Cluster.
	LeaseObserveInterval = time.Second
)
