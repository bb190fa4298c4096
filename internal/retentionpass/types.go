package retentionpass

import (
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
)

// Options are the inputs of a pass besides the store, the cluster and the policy.
type Options struct {
	// Now is the pass's notion of the current time (the caller's clock).
	Now time.Time
	// IncompleteGrace is how old the newest object of a backup directory without metadata.json
	// must be before the directory is deleted as an interrupted upload (and how old an open
	// multipart upload must be before it is aborted). Zero: DefaultIncompleteGrace.
	IncompleteGrace time.Duration
	// Protected reports backups that must survive whatever the policy says: those a Cluster's
	// bootstrap.recovery references, and those whose Backup is still running. May be nil.
	Protected func(objectstore.BackupRef) bool
	// MetadataConcurrency bounds the metadata.json reads in flight. Zero:
	// DefaultMetadataConcurrency.
	MetadataConcurrency int
	// Namespace is the Cluster's. A complete directory whose metadata.json names another
	// namespace is a Cluster of the same name elsewhere writing to the same location: it is not
	// this cluster's, never deleted, and reported in Report.Foreign. Empty: every directory is
	// this cluster's.
	Namespace string
	// Incarnations are the Cluster UIDs whose backups are this cluster's history (its own and
	// those it continues). A complete directory whose metadata.json records another UID is
	// another incarnation's: kept and reported in Report.Foreign. Empty: UIDs are not checked;
	// a metadata.json without a UID (written before it was recorded) is never foreign by it.
	Incarnations []string
}

// Report says what a pass found and did.
type Report struct {
	// Plan is the planner's decision on the inventory the pass gathered.
	Plan retention.Plan
	// Expired are the base backups whose directories were deleted, and their bytes.
	Expired      []objectstore.BackupRef
	ExpiredBytes int64
	// Segments and SegmentBytes count the binlog segments deleted.
	Segments     int
	SegmentBytes int64
	// Incomplete are the directories without metadata.json deleted after the grace period.
	Incomplete      []objectstore.BackupRef
	IncompleteBytes int64
	// AbortedUploads counts the multipart uploads older than the grace period that were aborted.
	AbortedUploads int
	// Unreadable are complete directories whose metadata.json is invalid or says the backup
	// completed more than MaxClockAhead after Now. They are kept, and while any is there no
	// binlog segment is deleted (its start time is unknown).
	Unreadable []objectstore.BackupRef
	// Unrestorable are complete directories whose archive is missing or does not have the size
	// metadata.json records: no restore can use them. They are kept, left out of the inventory
	// (so they never count as the newest backup, towards retentionCount or retentionSize, or
	// for the binlog horizon) and reported.
	Unrestorable []objectstore.BackupRef
	// Foreign are complete directories whose metadata.json names another namespace than
	// Options.Namespace, and ForeignNamespaces those namespaces, sorted. They are kept and left
	// out of the inventory; while any is there no binlog segment is deleted, since the binlog
	// directory is shared with that Cluster.
	Foreign           []objectstore.BackupRef
	ForeignNamespaces []string
	// Listed is true once the pass listed the cluster's directories and read their metadata;
	// then Found holds every complete directory it found (with metadata.json), whatever became of
	// it, and a Backup whose directory is in neither Found nor Expired no longer has its
	// metadata.json in the store.
	Listed bool
	Found  []objectstore.BackupRef
}

// DeletedAnything reports whether the pass removed any object.
func (r Report) DeletedAnything() bool {
	return len(r.Expired) > 0 || r.Segments > 0 || len(r.Incomplete) > 0 || r.AbortedUploads > 0
}
