package protection

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// Reasons of the BackupsHealthy condition.
const (
	ReasonSucceeded   = "LastBackupSucceeded"
	ReasonFailed      = "LastBackupFailed"
	ReasonNoSuccess   = "NoSuccessfulBackup"
	ReasonNoBackupYet = "NoBackupYet"
	maxReasonLength   = 1024
	refreshEvery      = 5 * time.Minute
)

// Listing is what the Cluster's location holds, as the object store listed it.
type Listing struct {
	Complete int32
	Bytes    int64
	At       time.Time
	// Err is why the location was not listed (not held, unreachable); the previous figures stay.
	Err error
}

// Observation is what Decide reads.
type Observation struct {
	Now       time.Time
	Cluster   *v1.Cluster
	Backups   []v1.Backup          // the Backups of this Cluster
	Schedules []v1.ScheduledBackup // the ScheduledBackups of this Cluster
	Listing   Listing
	// RecoveringFrom are the Backup names Clusters of the namespace recover from.
	RecoveringFrom map[string]bool
}

// Decision is the status to record, the condition, the Events and when to look again.
type Decision struct {
	Status       *v1.BackupsStatus
	Condition    *metav1.Condition // nil: the Cluster has no object store, no condition
	Events       []kit.Event
	RequeueAfter time.Duration
	// Prune are the Backup objects finishedBackupTTL deletes.
	Prune []v1.Backup
}

// Decide computes the Cluster's protection. A Cluster without an object store has none to
// report: no status, no condition.
func Decide(o Observation) Decision {
	c := o.Cluster
	if c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil {
		return Decision{}
	}
	st := &v1.BackupsStatus{}
	if old := c.Status.Backups; old != nil {
		st.Restorable, st.RestorableBytes, st.ListedAt = old.Restorable, old.RestorableBytes, old.ListedAt
	}
	if o.Listing.Err == nil && !o.Listing.At.IsZero() {
		at := metav1.NewTime(o.Listing.At.UTC().Truncate(time.Second))
		st.Restorable, st.RestorableBytes, st.ListedAt = o.Listing.Complete, o.Listing.Bytes, &at
	}
	st.LastSuccessful, st.LastFailed = lastRecords(c.Status.Backups, lastSuccess(o.Backups), lastFailure(o.Backups))
	success, failure := st.LastSuccessful, st.LastFailed
	st.FirstRecoverablePoint = firstRecoverable(c, o.Backups)
	st.NextScheduled = nextScheduled(o.Schedules)
	since := c.CreationTimestamp.Time
	if success != nil {
		since = success.CompletedAt.Time
	}
	criticalAt := since.Add(c.Spec.Backup.FailureAlertAfterOrDefault())
	critical := metav1.NewTime(criticalAt.UTC().Truncate(time.Second))
	st.CriticalAt = &critical

	cond := condition(o, success, failure, criticalAt)
	d := Decision{Status: st, Condition: &cond, RequeueAfter: refreshEvery}
	if wait := criticalAt.Sub(o.Now); wait > 0 && wait < d.RequeueAfter {
		d.RequeueAfter = wait + time.Second
	}
	d.Events = events(c, cond, failure)
	ttl := time.Duration(0)
	if c.Spec.Backup.FinishedBackupTTL != nil {
		ttl = c.Spec.Backup.FinishedBackupTTL.Duration
	}
	if d.Prune = expiredBackups(o.Now, ttl, o.Backups, o.RecoveringFrom); len(d.Prune) > 0 {
		d.Events = append(d.Events, evPruned.With(len(d.Prune), ttl, names(d.Prune)))
	}
	return d
}

// lastRecords are the last success and failure: of the Backup objects, or as recorded before
// when the recorded one is newer. A Backup object deleted since (history limits,
// finishedBackupTTL, by hand) does not erase what happened.
func lastRecords(old *v1.BackupsStatus, success, failure *v1.Backup) (*v1.SuccessfulBackupRecord, *v1.FailedBackupRecord) {
	var s *v1.SuccessfulBackupRecord
	var f *v1.FailedBackupRecord
	if success != nil {
		s = &v1.SuccessfulBackupRecord{Name: success.Name, CompletedAt: success.Status.CompletedAt,
			Size: success.Status.Size, GTIDExecuted: success.Status.GTIDExecuted, Method: methodOf(success)}
	}
	if failure != nil {
		f = &v1.FailedBackupRecord{Name: failure.Name, Reason: truncate(failure.Status.Error), At: failure.Status.CompletedAt}
	}
	if old == nil {
		return s, f
	}
	if r := old.LastSuccessful; r != nil && r.CompletedAt != nil && (s == nil || r.CompletedAt.After(s.CompletedAt.Time)) {
		s = r.DeepCopy()
	}
	if r := old.LastFailed; r != nil && r.At != nil && (f == nil || r.At.After(f.At.Time)) {
		f = r.DeepCopy()
	}
	return s, f
}

// condition is BackupsHealthy, most serious level first.
func condition(o Observation, success *v1.SuccessfulBackupRecord, failure *v1.FailedBackupRecord, criticalAt time.Time) metav1.Condition {
	c := o.Cluster
	cond := metav1.Condition{Type: v1.ConditionBackupsHealthy, ObservedGeneration: c.Generation}
	failedLast := failure != nil && (success == nil || failure.At.After(success.CompletedAt.Time))
	switch {
	case !o.Now.Before(criticalAt):
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNoSuccess
		since := "the Cluster's creation"
		if success != nil {
			since = fmt.Sprintf("Backup %s completed at %s", success.Name, success.CompletedAt.UTC().Format(time.RFC3339))
		}
		cond.Message = truncate(fmt.Sprintf("critical: no successful backup since %s, more than failureAlertAfter %s ago: %s",
			since, c.Spec.Backup.FailureAlertAfterOrDefault(), cause(o, failure, failedLast)))
	case failedLast:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonFailed
		cond.Message = truncate(fmt.Sprintf("Backup %s failed at %s: %s; NoSuccessfulBackup at %s unless a backup succeeds",
			failure.Name, failure.At.UTC().Format(time.RFC3339), failure.Reason, criticalAt.UTC().Format(time.RFC3339)))
	case success != nil:
		cond.Status, cond.Reason = metav1.ConditionTrue, ReasonSucceeded
		cond.Message = fmt.Sprintf("Backup %s completed at %s", success.Name, success.CompletedAt.UTC().Format(time.RFC3339))
	default:
		cond.Status, cond.Reason = metav1.ConditionUnknown, ReasonNoBackupYet
		cond.Message = fmt.Sprintf("no Backup of this Cluster has finished yet; NoSuccessfulBackup at %s unless one succeeds",
			criticalAt.UTC().Format(time.RFC3339))
	}
	return cond
}

// cause says why no backup succeeded: the last failure, no schedule, or schedules suspended.
func cause(o Observation, failure *v1.FailedBackupRecord, failedLast bool) string {
	active := 0
	for _, s := range o.Schedules {
		if s.Spec.Suspend == nil || !*s.Spec.Suspend {
			active++
		}
	}
	switch {
	case failedLast:
		return fmt.Sprintf("the last Backup, %s, failed: %s", failure.Name, failure.Reason)
	case len(o.Schedules) == 0:
		return "no ScheduledBackup backs this Cluster up, and no Backup succeeded"
	case active == 0:
		return "every ScheduledBackup of this Cluster is suspended"
	}
	return "no Backup of this Cluster finished (a schedule not firing, or a Backup stuck pending or running)"
}

// events: a Warning for each new failed Backup that is the last to finish, a Warning when the
// critical level is reached, a Normal when the Cluster is protected again.
func events(c *v1.Cluster, cond metav1.Condition, failure *v1.FailedBackupRecord) []kit.Event {
	old := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionBackupsHealthy)
	var prevFailed string
	if c.Status.Backups != nil && c.Status.Backups.LastFailed != nil {
		prevFailed = c.Status.Backups.LastFailed.Name
	}
	var out []kit.Event
	switch {
	case cond.Reason == ReasonNoSuccess && (old == nil || old.Reason != ReasonNoSuccess):
		out = append(out, evNoSuccess.With(cond.Message))
	case cond.Reason == ReasonFailed && (old == nil || old.Reason != ReasonFailed || prevFailed != failure.Name):
		out = append(out, evFailed.With(cond.Message))
	case cond.Status == metav1.ConditionTrue && old != nil && old.Status == metav1.ConditionFalse:
		out = append(out, evHealthy.With(cond.Message))
	}
	return out
}

// lastSuccess is the completed Backup that completed last (ties: the greater name).
func lastSuccess(backups []v1.Backup) *v1.Backup {
	return latest(backups, v1.BackupPhaseCompleted)
}

// lastFailure is the failed Backup that failed last.
func lastFailure(backups []v1.Backup) *v1.Backup {
	return latest(backups, v1.BackupPhaseFailed)
}

func latest(backups []v1.Backup, phase v1.BackupPhase) *v1.Backup {
	var best *v1.Backup
	for i := range backups {
		b := &backups[i]
		if b.Status.Phase != phase || b.Status.CompletedAt == nil {
			continue
		}
		if best == nil || b.Status.CompletedAt.After(best.Status.CompletedAt.Time) ||
			(b.Status.CompletedAt.Equal(best.Status.CompletedAt) && b.Name > best.Name) {
			best = b
		}
	}
	return best
}

// firstRecoverable is the start of the archive's window, else the end of the oldest completed
// Backup whose artifacts are still available.
func firstRecoverable(c *v1.Cluster, backups []v1.Backup) *metav1.Time {
	if a := c.Status.BinlogArchive; a != nil && a.RecoverableFrom != nil {
		t := metav1.NewTime(a.RecoverableFrom.Time.UTC().Truncate(time.Second))
		return &t
	}
	var ends []time.Time
	for _, b := range backups {
		if b.Status.Phase == v1.BackupPhaseCompleted && b.Status.CompletedAt != nil &&
			!meta.IsStatusConditionFalse(b.Status.Conditions, v1.BackupArtifactsAvailable) {
			ends = append(ends, b.Status.CompletedAt.Time)
		}
	}
	if len(ends) == 0 {
		return nil
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
	t := metav1.NewTime(ends[0].UTC())
	return &t
}

// nextScheduled is the earliest next run of the schedules that are not suspended.
func nextScheduled(schedules []v1.ScheduledBackup) *metav1.Time {
	var next *metav1.Time
	for _, s := range schedules {
		if (s.Spec.Suspend != nil && *s.Spec.Suspend) || s.Status.NextScheduleTime == nil {
			continue
		}
		if next == nil || s.Status.NextScheduleTime.Before(next) {
			t := *s.Status.NextScheduleTime
			next = &t
		}
	}
	return next
}

func methodOf(b *v1.Backup) v1.BackupMethod {
	if b.Spec.Method == "" {
		return v1.BackupMethodClone
	}
	return b.Spec.Method
}

func truncate(s string) string {
	if len(s) <= maxReasonLength {
		return s
	}
	return s[:maxReasonLength] + "…"
}
