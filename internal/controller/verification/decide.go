package verification

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/schedule"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// Job is one verification Job of the Cluster, as gathered.
type Job struct {
	Job *batchv1.Job
	// Backup is the Backup it verifies (its VerificationLabel).
	Backup string
	// Message is its container's termination message once it finished ("" when none).
	Message string
	// BackupCompletedAt is when that Backup completed; nil when it is gone.
	BackupCompletedAt *metav1.Time
}

// due is the instant that made j due (its annotation); nil when unreadable.
func (j Job) due() *metav1.Time {
	t, err := time.Parse(time.RFC3339Nano, j.Job.Annotations[v1.VerificationDueAnnotation])
	if err != nil {
		return nil
	}
	return mt(t)
}

func mt(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

// Observation is what Decide needs.
type Observation struct {
	Now     time.Time
	Cluster *v1.Cluster
	// Backups are the Cluster's completed Backups whose objects are still in the store.
	Backups []v1.Backup
	Jobs    []Job
}

// Outcome is the result of a finished verification Job.
type Outcome struct {
	Job    *batchv1.Job
	Backup string
	// BackupCompletedAt is when the Backup completed (Job.BackupCompletedAt).
	BackupCompletedAt *metav1.Time
	// Due is the instant that made the verification due.
	Due    *metav1.Time
	Status v1.BackupVerificationStatus
	// Message explains the result, for the conditions and Events.
	Message string
}

// Start is a verification to start.
type Start struct {
	Backup  *v1.Backup
	JobName string
	// Due is the instant that made it due.
	Due time.Time
	// Archive is the directory whose binlog archive the Job replays; empty for none.
	Archive string
	// Why says what made it due.
	Why string
}

// Decision is what the reconciler does.
type Decision struct {
	// Record are the finished Jobs, oldest first: recorded, then deleted.
	Record []Outcome
	Start  *Start
	// Condition is the Cluster's BackupsVerified condition; nil removes it.
	Condition *metav1.Condition
	// RequeueAfter is when to look again without a change (the next slot); 0: on changes only.
	RequeueAfter time.Duration
}

// Decide records finished verifications and starts the next one when it is due.
func Decide(o Observation) Decision {
	c := o.Cluster
	var d Decision
	running := false
	for _, j := range sortedJobs(o.Jobs) {
		if kit.JobFinished(j.Job) {
			d.Record = append(d.Record, outcome(j, o.Now))
		} else {
			running = true
		}
	}
	v := verificationOf(c)
	if v == nil {
		return d
	}
	last := lastVerified(c, d.Record)
	d.Condition = condition(last)
	if running || len(d.Record) > 0 {
		// One at a time; a verification just recorded is looked at again once its status is
		// written (the Cluster's change brings it back).
		return d
	}
	due, why, next, err := dueAt(v, c, o, last)
	if err != nil {
		// Reported; everyBackups still applies.
		d.Condition = &metav1.Condition{Type: v1.ClusterBackupsVerified, Status: metav1.ConditionFalse,
			Reason: ReasonInvalidSchedule, Message: err.Error()}
	}
	if !next.IsZero() {
		d.RequeueAfter = next.Sub(o.Now)
	}
	if due.IsZero() {
		return d
	}
	target := newest(o.Backups)
	if target == nil {
		return d // nothing to verify yet: a completed Backup brings the Cluster back
	}
	d.Start = &Start{Backup: target, JobName: specs.VerificationJobName(target.Name, due), Due: due,
		Archive: archiveOf(c, target), Why: why}
	return d
}

// ReasonInvalidSchedule: spec.backup.verification.schedule does not parse.
const ReasonInvalidSchedule = "InvalidSchedule"

func verificationOf(c *v1.Cluster) *v1.BackupVerification {
	if c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil {
		return nil
	}
	return c.Spec.Backup.Verification
}

// dueAt is the instant the next verification became due (zero when none is), what made it due,
// and the next slot of the schedule.
func dueAt(v *v1.BackupVerification, c *v1.Cluster, o Observation, last *v1.LastVerifiedBackup) (time.Time, string, time.Time, error) {
	var due, next time.Time
	var why string
	var schedErr error
	if v.Schedule != "" {
		s, err := schedule.Parse(v.Schedule)
		if err != nil {
			schedErr = fmt.Errorf("spec.backup.verification.schedule: %w", err)
		} else {
			h := schedule.History{Created: c.CreationTimestamp.Time}
			if last != nil {
				// The slot last verified, or the Job's start when later: a slot is never due twice,
				// whatever the clock of the Job controller that set the start says.
				for _, t := range []*metav1.Time{last.Due, last.StartedAt} {
					if t != nil && t.Time.After(h.LastSchedule) {
						h.LastSchedule = t.Time
					}
				}
			}
			p := s.Plan(h, o.Now)
			due, next = p.Due, p.Next
			if !due.IsZero() {
				why = "the schedule's slot " + due.UTC().Format(time.RFC3339)
			}
		}
	}
	if n := v.EveryBackups; n != nil {
		var since time.Time
		if last != nil && last.BackupCompletedAt != nil {
			since = last.BackupCompletedAt.Time
		}
		var newer []time.Time
		for _, b := range o.Backups {
			if at := b.Status.CompletedAt; at != nil && at.Time.After(since) {
				newer = append(newer, at.Time)
			}
		}
		if len(newer) >= int(*n) {
			at := slices.MaxFunc(newer, func(a, b time.Time) int { return a.Compare(b) })
			if due.IsZero() || at.After(due) {
				due, why = at, fmt.Sprintf("%d backup(s) completed since the last verification (everyBackups %d)", len(newer), *n)
			}
		}
	}
	return due, why, next, schedErr
}

// newest is the completed Backup that completed last, nil when none.
func newest(backups []v1.Backup) *v1.Backup {
	var out *v1.Backup
	for i := range backups {
		b := &backups[i]
		if b.Status.CompletedAt == nil || b.Status.BackupID == "" || b.Status.DestinationPath == "" {
			continue
		}
		if out == nil || b.Status.CompletedAt.After(out.Status.CompletedAt.Time) {
			out = b
		}
	}
	return out
}

// archiveOf is the binlog archive a verification of b replays: the Cluster's location when it
// holds it, archiving runs, and b was written there.
func archiveOf(c *v1.Cluster, b *v1.Backup) string {
	if !c.HoldsObjectStoreLocation() || c.Status.BinlogArchive == nil {
		return ""
	}
	prefix, ref, err := objectstore.ParseBackupDir(b.Status.DestinationPath)
	if err != nil {
		return ""
	}
	store := c.Spec.Backup.ObjectStore.DeepCopy()
	if b.Status.ObjectStore != nil {
		store = b.Status.ObjectStore.DeepCopy()
	}
	store.Path = prefix
	if b.Status.Bucket != "" {
		store.Bucket = b.Status.Bucket
	}
	if v1.LocationOf(store, ref.Cluster) != c.ObjectStoreLocation() {
		return "" // written to another location than the one archived now
	}
	return ref.Cluster
}

func sortedJobs(jobs []Job) []Job {
	out := slices.Clone(jobs)
	slices.SortFunc(out, func(a, b Job) int {
		return cmp.Or(a.Job.CreationTimestamp.Compare(b.Job.CreationTimestamp.Time), cmp.Compare(a.Job.Name, b.Job.Name))
	})
	return out
}

// outcome reads a finished Job: its result when the Pod wrote one, else why the Job failed.
func outcome(j Job, now time.Time) Outcome {
	started := j.Job.CreationTimestamp
	if st := j.Job.Status.StartTime; st != nil {
		started = *st
	}
	failed := kit.JobFailedCondition(j.Job)
	completed := metav1.NewTime(now)
	if ct := j.Job.Status.CompletionTime; ct != nil {
		completed = *ct
	} else if failed != nil && !failed.LastTransitionTime.IsZero() {
		completed = failed.LastTransitionTime
	}
	out := Outcome{Job: j.Job, Backup: j.Backup, BackupCompletedAt: j.BackupCompletedAt, Due: j.due(),
		Status: v1.BackupVerificationStatus{JobName: j.Job.Name, StartedAt: &started, CompletedAt: &completed}}
	res, ok := backupjob.ParseVerifyResult(j.Message)
	timedOut := failed != nil && failed.Reason == batchv1.JobReasonDeadlineExceeded
	switch {
	case ok && (res.Passed || !timedOut):
		out.Status.Passed, out.Status.Reason = res.Passed, res.Reason
		out.Status.GTIDExecuted = res.GTIDExecuted
		out.Status.ReplayedSegments, out.Status.ReplayedTransactions = int32(res.Segments), res.Transactions
		out.Status.Tables, out.Status.TablesChecked, out.Status.Rows = int32(res.Tables), int32(res.TablesChecked), res.Rows
		if res.Passed {
			out.Status.Reason = v1.ReasonVerificationPassed
			out.Message = passedMessage(res)
		} else {
			if !validReason.MatchString(res.Reason) {
				out.Status.Reason = v1.ReasonVerificationFailed // a condition's reason must be a word
			}
			out.Message = "the verification of Backup " + j.Backup + " failed: " + res.Message
		}
	case timedOut: // stopped at its deadline: whatever it wrote as it was stopped is not the cause
		out.Status.Reason = v1.ReasonVerificationTimedOut
		out.Message = fmt.Sprintf("the verification of Backup %s ran past its timeout (%ds) and was stopped",
			j.Backup, deadline(j.Job))
	default:
		out.Status.Reason = v1.ReasonVerificationJobFailed
		msg := "the Job ended without a result"
		if failed != nil {
			msg += ": " + failed.Reason + " " + failed.Message
		}
		out.Message = "the verification of Backup " + j.Backup + " did not run to its end (" + msg + "); the backup itself was not found faulty"
	}
	return out
}

func passedMessage(r backupjob.VerifyResult) string {
	msg := fmt.Sprintf("restored and verified in %s: sha256 and size, mysqld started, gtid_executed %q",
		(time.Duration(r.RestoreMillis+r.ReplayMillis+r.CheckMillis) * time.Millisecond).Round(time.Second), r.GTIDExecuted)
	if r.Transactions > 0 {
		msg += fmt.Sprintf(" after replaying %d transaction(s) from %d archived segment(s)", r.Transactions, r.Segments)
	}
	msg += fmt.Sprintf("; CHECK TABLE passed on %d of %d tables", r.TablesChecked, r.Tables)
	if r.Sampled() {
		msg += " (the budget ran out: a sample)"
	}
	return msg + fmt.Sprintf(", %d rows counted", r.Rows)
}

func deadline(j *batchv1.Job) int64 {
	if d := j.Spec.ActiveDeadlineSeconds; d != nil {
		return *d
	}
	return 0
}

// lastVerified is the Cluster's last verification once the outcomes are recorded.
func lastVerified(c *v1.Cluster, record []Outcome) *v1.LastVerifiedBackup {
	last := c.Status.LastVerifiedBackup
	if len(record) == 0 {
		return last
	}
	for _, o := range record {
		last = LastOf(o, last)
	}
	return last
}

// LastOf is the Cluster's lastVerifiedBackup after outcome o; prev is the one before.
func LastOf(o Outcome, prev *v1.LastVerifiedBackup) *v1.LastVerifiedBackup {
	l := &v1.LastVerifiedBackup{Name: o.Backup, JobName: o.Job.Name, Passed: o.Status.Passed, Reason: o.Status.Reason,
		StartedAt: o.Status.StartedAt, CompletedAt: o.Status.CompletedAt, BackupCompletedAt: o.BackupCompletedAt, Due: o.Due}
	if prev != nil {
		l.LastPassedAt = prev.LastPassedAt
		if l.BackupCompletedAt == nil && prev.Name == o.Backup {
			l.BackupCompletedAt = prev.BackupCompletedAt
		}
	}
	if o.Status.Passed {
		l.LastPassedAt = o.Status.CompletedAt
	}
	return l
}

// condition is the Cluster's BackupsVerified condition for its last verification.
func condition(last *v1.LastVerifiedBackup) *metav1.Condition {
	if last == nil {
		return &metav1.Condition{Type: v1.ClusterBackupsVerified, Status: metav1.ConditionUnknown,
			Reason: v1.ReasonVerificationPending, Message: "no verification of a backup of this Cluster has ended yet"}
	}
	if last.Passed {
		return &metav1.Condition{Type: v1.ClusterBackupsVerified, Status: metav1.ConditionTrue, Reason: last.Reason,
			Message: "Backup " + last.Name + " was restored and verified (Job " + last.JobName + "); see its Verified condition"}
	}
	if last.Reason == v1.ReasonVerificationJobFailed {
		return &metav1.Condition{Type: v1.ClusterBackupsVerified, Status: metav1.ConditionUnknown, Reason: last.Reason,
			Message: "the last verification, of Backup " + last.Name + " (Job " + last.JobName + "), did not run to its end; " +
				"the backup was not found faulty and is verified again at the next slot or backups"}
	}
	return &metav1.Condition{Type: v1.ClusterBackupsVerified, Status: metav1.ConditionFalse, Reason: last.Reason,
		Message: "the last verification, of Backup " + last.Name + " (Job " + last.JobName + "), failed; see the Backup's Verified condition"}
}

// validReason is the form of a condition's reason.
var validReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// BackupCondition is the Backup's Verified condition for outcome o; keep is true when the
// Backup's condition stays as it is: a Job that did not run to its end says nothing of a backup
// already verified.
func BackupCondition(o Outcome, current *metav1.Condition) (cond metav1.Condition, keep bool) {
	cond = metav1.Condition{Type: v1.BackupVerified, Status: metav1.ConditionFalse, Reason: o.Status.Reason, Message: o.Message}
	switch {
	case o.Status.Passed:
		cond.Status = metav1.ConditionTrue
	case o.Status.Reason == v1.ReasonVerificationJobFailed:
		if current != nil && current.Status == metav1.ConditionTrue {
			return cond, true
		}
		cond.Status = metav1.ConditionUnknown
	}
	return cond, false
}
