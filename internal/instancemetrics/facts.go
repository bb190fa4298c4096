package instancemetrics

import (
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// Facts are what the instance manager knows of its instance at one scrape.
type Facts struct {
	// Status is mysqld's newest status, nil when it did not answer recently (then Up is 0 and
	// none of mysqld's own figures is exported: a missing series is unknown, not zero).
	Status *mysql.Status
	// FallenBack: the manager turned semi-sync off on this primary after the acknowledgement
	// timeout (SemiSyncFallback); the source side is then off although the spec enables it.
	FallenBack bool
	// Server are mysqld's counters, nil when reading them failed.
	Server *mysql.ServerMetrics
	// Primary: the Cluster's status.currentPrimary names this instance (as the instance manager
	// last read it), whether or not it is writable now, or it is promoting. Fenced: the Cluster
	// lists it fenced. Neither is known (RoleKnown false) before the role reconciler's first pass:
	// both are then left out, not reported false.
	RoleKnown bool
	Primary   bool
	Fenced    bool
	Diverged  bool
	Isolated  bool
	// LeaseHeld and LeaseRenewed: this instance holds the primary Lease, last renewed then.
	LeaseHeld    bool
	LeaseRenewed time.Time
	SelfFences   int64
	// Certificates are the notAfter of the certificates in use, by name (server, client).
	Certificates map[string]time.Time
	Now          time.Time
}
