package retention

import "time"

// Policy is a Cluster's retention settings. A zero field is not configured; a zero Policy
// expires nothing.
type Policy struct {
	// Window expires base backups completed before now minus Window.
	Window time.Duration
	// Count keeps the newest Count completed base backups.
	Count int
	// Size keeps the newest base backups whose sizes add up to at most Size bytes.
	Size int64
}

// IsZero reports whether no policy is configured.
func (p Policy) IsZero() bool { return p.Window <= 0 && p.Count <= 0 && p.Size <= 0 }

// BaseBackup is one completed base backup in the object store.
type BaseBackup struct {
	// Key identifies the backup to the caller (its directory in the store); it breaks ties.
	Key         string
	StartedAt   time.Time
	CompletedAt time.Time
	// Size is the bytes the backup occupies in the store.
	Size int64
	// Protected backups are never expired (a Cluster's bootstrap.recovery references them); they
	// are retained like any other kept backup.
	Protected bool
}

// Segment is one archived binlog segment as _index.json describes it. A zero event time is
// unknown.
type Segment struct {
	Name           string
	FirstEventTime time.Time
	LastEventTime  time.Time
	Size           int64
}

// Inventory is what a pass found: the completed base backups (any order) and the segments of
// the binlog index.
type Inventory struct {
	Backups  []BaseBackup
	Segments []Segment
}

// Reason is a policy that expired a backup.
type Reason string

// The policies that can expire a base backup.
const (
	ReasonWindow Reason = "window"
	ReasonCount  Reason = "count"
	ReasonSize   Reason = "size"
)

// ExpiredBackup is a base backup the plan deletes, with every policy that expired it.
type ExpiredBackup struct {
	BaseBackup
	Reasons []Reason
}

// Plan is what a pass deletes and what it keeps.
type Plan struct {
	// Keep are the retained base backups, newest first.
	Keep []BaseBackup
	// Expire are the base backups to delete, newest first.
	Expire []ExpiredBackup
	// DeleteSegments are the segments whose last event predates Horizon, in inventory order.
	DeleteSegments []Segment
	// Horizon is the start of the oldest retained base backup: the earliest point a retained
	// backup plus the binlogs can recover to. Zero when no backup is retained, and then no
	// segment is deleted.
	Horizon time.Time
	// ExpiredBytes and SegmentBytes are the sizes of Expire and DeleteSegments.
	ExpiredBytes int64
	SegmentBytes int64
}
