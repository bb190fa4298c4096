package controller

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
)

const (
	// RetentionInterval is the least time between two retention passes of a Cluster.
	RetentionInterval = time.Hour
	// retentionRetryBase is the wait after the first failed pass; it doubles with each failure
	// in a row, up to RetentionInterval.
	retentionRetryBase = time.Minute
	// minIncompleteGrace is the least age of a backup directory without metadata.json before a
	// pass deletes it as an interrupted upload.
	minIncompleteGrace = 24 * time.Hour
)

// Why a Cluster gets no retention pass. Every skip is logged with its reason.
const (
	retentionSkipDeleting      = "the Cluster is being deleted"
	retentionSkipNoPolicy      = "no retention policy (spec.backup.retentionPolicy, retentionCount, retentionSize)"
	retentionSkipNoObjectStore = "no object store (spec.backup.objectStore)"
	retentionSkipNoPrimary     = "no established primary yet (status.currentPrimary is empty)"
	retentionSkipInvalid       = "the retention policy is invalid"
)

// retentionObservation is what the schedule decision reads: the Cluster, its parsed policy and
// the time.
type retentionObservation struct {
	Now       time.Time
	Cluster   *v1.Cluster
	Policy    retention.Policy
	PolicyErr error
}

// retentionSchedule says whether a pass runs now. Skip is set when none runs until the Cluster
// changes; otherwise Due says a pass runs now, or RequeueAfter when the next one is due.
type retentionSchedule struct {
	Skip         string
	Due          bool
	RequeueAfter time.Duration
	Events       []eventRecord
}

// decideRetentionSchedule decides whether a Cluster's retention pass is due. A pass needs a
// policy, an object store and an established primary: status.currentPrimary is set only once an
// instance has taken the primary role, so a Cluster still bootstrapping (or restoring) never
// deletes anything. Passes run at most once per RetentionInterval after
// status.lastRetentionRunTime; a stamp more than one interval in the future (a clock that went
// back) is disregarded rather than blocking retention until then.
func decideRetentionSchedule(o retentionObservation) retentionSchedule {
	c := o.Cluster
	switch {
	case c.DeletionTimestamp != nil:
		return retentionSchedule{Skip: retentionSkipDeleting}
	case o.PolicyErr != nil:
		return retentionSchedule{Skip: retentionSkipInvalid,
			Events: []eventRecord{evRetentionInvalid.with(o.PolicyErr.Error())}}
	case o.Policy.IsZero():
		return retentionSchedule{Skip: retentionSkipNoPolicy}
	case c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil:
		return retentionSchedule{Skip: retentionSkipNoObjectStore}
	case c.Status.CurrentPrimary == "":
		return retentionSchedule{Skip: retentionSkipNoPrimary}
	}
	last := c.Status.LastRetentionRunTime
	if last == nil || last.Time.After(o.Now.Add(RetentionInterval)) {
		return retentionSchedule{Due: true}
	}
	next := last.Add(RetentionInterval)
	if !o.Now.Before(next) {
		return retentionSchedule{Due: true}
	}
	return retentionSchedule{RequeueAfter: next.Sub(o.Now)}
}

// retentionBackoff is the wait before retrying after failures failed passes in a row: one
// minute, doubling, at most RetentionInterval.
func retentionBackoff(failures int) time.Duration {
	d := retentionRetryBase
	for i := 1; i < failures && d < RetentionInterval; i++ {
		d *= 2
	}
	return min(d, RetentionInterval)
}

// incompleteGrace is how old a backup directory without metadata.json must be before a pass of
// cluster deletes it: at least minIncompleteGrace, and longer than the timeout of any of the
// cluster's Backups that is not done, since such a Backup may still write its metadata.json until
// its timeout fails it. The 24 hours floor also absorbs clock skew between the object store,
// which dates the objects, and the operator.
func incompleteGrace(cluster string, backups []v1.Backup) time.Duration {
	grace := minIncompleteGrace
	for i := range backups {
		b := &backups[i]
		if b.Spec.Cluster.Name == cluster && !b.IsDone() {
			grace = max(grace, b.EffectiveTimeout()+time.Hour)
		}
	}
	return grace
}

// describePolicy renders a Cluster's retention settings for Events.
func describePolicy(b *v1.BackupConfiguration) string {
	if b == nil {
		return "none"
	}
	var parts []string
	if b.RetentionPolicy != "" {
		parts = append(parts, "window "+b.RetentionPolicy)
	}
	if b.RetentionCount != nil {
		parts = append(parts, fmt.Sprintf("count %d", *b.RetentionCount))
	}
	if b.RetentionSize != nil {
		parts = append(parts, "size "+b.RetentionSize.String())
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// retentionOutcome is what follows a pass: whether to stamp lastRetentionRunTime, the Events and
// when to look again.
type retentionOutcome struct {
	Stamp        bool
	Events       []eventRecord
	RequeueAfter time.Duration
}

// decideRetentionOutcome decides what a pass that ended with report and err leads to. A success
// is stamped and looked at again after RetentionInterval, with a Normal Event only when it
// deleted something; a failure is not stamped, emits a Warning and is retried with backoff
// (failures counts it). What a failed pass already deleted is still reported in its Event.
func decideRetentionOutcome(policy string, report retentionpass.Report, err error, failures int) retentionOutcome {
	if err != nil {
		msg := err.Error()
		if report.DeletedAnything() {
			msg += "; before failing it deleted " + describeDeleted(report)
		}
		return retentionOutcome{RequeueAfter: retentionBackoff(failures),
			Events: []eventRecord{evRetentionFailed.with(msg, retentionBackoff(failures))}}
	}
	out := retentionOutcome{Stamp: true, RequeueAfter: RetentionInterval}
	if report.DeletedAnything() {
		out.Events = []eventRecord{evRetention.with(policy, describeDeleted(report))}
	}
	if n := len(report.Unreadable); n > 0 {
		out.Events = append(out.Events, evRetentionUnreadable.with(n, describeRefs(report.Unreadable)))
	}
	if n := len(report.Unrestorable); n > 0 {
		out.Events = append(out.Events, evRetentionUnrestorable.with(n, describeRefs(report.Unrestorable)))
	}
	if n := len(report.Foreign); n > 0 {
		out.Events = append(out.Events, evRetentionForeign.with(n, strings.Join(report.ForeignNamespaces, ", "),
			describeRefs(report.Foreign)))
	}
	return out
}

// maxEventRefs bounds the directories an Event names.
const maxEventRefs = 20

// describeRefs names backup directories as <name>/<id>, at most maxEventRefs of them.
func describeRefs(refs []objectstore.BackupRef) string {
	names := make([]string, 0, min(len(refs), maxEventRefs))
	for _, ref := range refs[:min(len(refs), maxEventRefs)] {
		names = append(names, ref.Name+"/"+ref.ID)
	}
	if n := len(refs) - len(names); n > 0 {
		names = append(names, fmt.Sprintf("and %d more", n))
	}
	return strings.Join(names, ", ")
}

// describeDeleted counts what a pass deleted, with bytes.
func describeDeleted(r retentionpass.Report) string {
	return fmt.Sprintf("%d expired base backup(s) (%d bytes), %d binlog segment(s) (%d bytes), %d incomplete backup director(ies) (%d bytes), %d stale multipart upload(s)",
		len(r.Expired), r.ExpiredBytes, r.Segments, r.SegmentBytes, len(r.Incomplete), r.IncompleteBytes, r.AbortedUploads)
}
