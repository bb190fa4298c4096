package failover

import "github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"

// Rejoin is the verdict on a former primary (or any instance) that comes back after a primary
// change.
type Rejoin struct {
	// Diverged: it holds transactions the new primary never had. It stays read-only, is listed in
	// status.divergedInstances, is out of every Service, and its PVC is kept for a human.
	Diverged bool
	// Errant are those transactions.
	Errant gtid.Set
}

// CheckRejoin decides whether an instance whose gtid_executed is executed may follow a primary
// whose gtid_executed is primary: only when its set is contained in the primary's. received is
// what its replication channel already received from that primary (empty for a former primary
// that never replicated from it): those transactions are in the primary's binary log even when
// not yet in its gtid_executed, so they are not errant. The caller reads executed before primary,
// so that a primary's set, which only grows, holds everything the instance got from it.
func CheckRejoin(executed, primary, received gtid.Set) Rejoin {
	errant := gtid.Errant(executed, primary).Subtract(received)
	return Rejoin{Diverged: !errant.IsEmpty(), Errant: errant}
}
