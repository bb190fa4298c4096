package binlogarchive

import (
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// Role is what the instance knows of its own role: only an instance that is the recorded
// primary, is not fenced or demoted, holds the primary Lease (when the Cluster uses one) and is
// writable archives; any other stands down.
type Role struct {
	Primary       bool
	Fenced        bool
	Demoted       bool
	LeaseRequired bool
	LeaseHeld     bool
	Writable      bool
	// Dir is the Cluster's directory in the object store (spec.backup.serverName or its name);
	// the Archiver's Cluster when empty.
	Dir string
	// LocationNotHeld, when set, says why the Cluster does not hold its object store location
	// (status.objectStoreLocation): the primary archives nothing there.
	LocationNotHeld string
	// LocationInUse says another incarnation holds the location (not a claim still pending): the
	// binlogs are then left to mysqld's own expiry rather than kept without bound.
	LocationInUse bool
}

// Binlog is one local binary log as observed.
type Binlog struct {
	Name string
	Size int64
	// Open marks the binlog the server writes to (the last one).
	Open bool
	// Previous is the binlog's Previous_gtids: what the server had executed before it.
	Previous gtid.Set
	// GTIDs are the transactions it holds: for a closed binlog, the next binlog's Previous
	// minus its own; for the open one, gtid_executed minus its Previous.
	GTIDs gtid.Set
	// FirstEvent is the commit time of its first transaction (zero when it has none).
	FirstEvent time.Time
	// ClosedAt is when a closed binlog was last written (zero for the open one).
	ClosedAt time.Time
}

// Observation is everything Decide needs, gathered by the Archiver.
type Observation struct {
	Now  time.Time
	Role Role
	// Binlogs are the local binary logs, oldest first; the last is the open one.
	Binlogs []Binlog
	// Executed is the server's gtid_executed.
	Executed gtid.Set
	// Archived is the union of the GTID sets of the archive's segments; Covered adds their
	// Previous_gtids (history from before the archive began, which a base backup holds).
	Archived gtid.Set
	Covered  gtid.Set
	// ArchiveEmpty is true when the index lists no segment yet.
	ArchiveEmpty bool
	// ArchiveTimeout bounds the age of the oldest transaction of the open binlog.
	ArchiveTimeout time.Duration
	// KeepLocal is how long an archived binlog stays on the local disk after it closed.
	KeepLocal time.Duration
}

// Decision says what the archiver does in one pass.
type Decision struct {
	// StandDown, when set, is why the archiver does nothing at all (not primary, fenced, ...).
	StandDown string
	// Fork is the archived history the server has not executed: archiving over it would mix two
	// histories, so nothing is archived, rotated or purged while it is not empty.
	Fork gtid.Set
	// Gap is history the server executed before its first binlog to archive that the archive
	// does not hold: the archive cannot be replayed across it. It is reported; archiving goes on.
	Gap gtid.Set
	// Upload names the closed binlogs to archive, oldest first.
	Upload []string
	// Rotate asks for FLUSH BINARY LOGS: the open binlog's oldest transaction passed the timeout.
	Rotate bool
	// PurgeTo, when set, is the binlog to purge up to (PURGE BINARY LOGS TO): every binlog
	// before it is archived and older than KeepLocal.
	PurgeTo string
	// Backlog counts the binlogs holding transactions not yet archived (the open one included).
	Backlog int
	// OldestUnarchived is the commit time of the oldest transaction not yet archived (zero when
	// everything is archived): the archive lag is Now minus it.
	OldestUnarchived time.Time
	// OpenUnarchived is the commit time of the open binlog's oldest transaction (zero when it
	// has none): once the uploads succeeded, the lag is Now minus it.
	OpenUnarchived time.Time
}

// Stand-down reasons.
const (
	ReasonNotPrimary   = "not the primary"
	ReasonFenced       = "fenced"
	ReasonDemoted      = "demoted"
	ReasonNoLease      = "primary Lease not held"
	ReasonReadOnly     = "read-only"
	ReasonNoBinlogs    = "no binary log"
	reasonNoneStandsBy = ""
)

// Decide plans one pass of the archiver.
func Decide(o Observation) Decision {
	if why := standDown(o); why != reasonNoneStandsBy {
		return Decision{StandDown: why}
	}
	d := Decision{}
	if fork := o.Archived.Subtract(o.Executed); !fork.IsEmpty() {
		d.Fork = fork
		return d
	}
	archived := func(b Binlog) bool { return o.Archived.Contains(b.GTIDs) }
	for _, b := range o.Binlogs {
		if archived(b) {
			continue
		}
		d.Backlog++
		if d.OldestUnarchived.IsZero() || (!b.FirstEvent.IsZero() && b.FirstEvent.Before(d.OldestUnarchived)) {
			d.OldestUnarchived = b.FirstEvent
		}
		if b.Open {
			d.OpenUnarchived = b.FirstEvent
		} else {
			d.Upload = append(d.Upload, b.Name)
		}
	}
	if len(d.Upload) > 0 && !o.ArchiveEmpty {
		first := find(o.Binlogs, d.Upload[0])
		d.Gap = first.Previous.Subtract(gtid.Union(o.Archived, o.Covered))
	}
	open := o.Binlogs[len(o.Binlogs)-1]
	d.Rotate = !open.GTIDs.IsEmpty() && !open.FirstEvent.IsZero() && !o.Now.Before(open.FirstEvent.Add(o.ArchiveTimeout))
	d.PurgeTo = purgeTo(o, archived)
	return d
}

func standDown(o Observation) string {
	r := o.Role
	switch {
	case r.Fenced:
		return ReasonFenced
	case r.Demoted:
		return ReasonDemoted
	case !r.Primary:
		return ReasonNotPrimary
	case r.LeaseRequired && !r.LeaseHeld:
		return ReasonNoLease
	case !r.Writable:
		return ReasonReadOnly
	case len(o.Binlogs) == 0:
		return ReasonNoBinlogs
	}
	return reasonNoneStandsBy
}

// purgeTo returns the first binlog that must stay, when binlogs before it may go: each is closed,
// archived and closed for at least KeepLocal.
func purgeTo(o Observation, archived func(Binlog) bool) string {
	for i, b := range o.Binlogs {
		purgeable := !b.Open && archived(b) && !b.ClosedAt.IsZero() && !o.Now.Before(b.ClosedAt.Add(o.KeepLocal))
		if purgeable {
			continue
		}
		if i == 0 {
			return ""
		}
		return b.Name
	}
	return "" // unreachable: the open binlog always stays
}

func find(binlogs []Binlog, name string) Binlog {
	for _, b := range binlogs {
		if b.Name == name {
			return b
		}
	}
	return Binlog{}
}
