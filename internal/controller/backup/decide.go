package backup

import (
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// waitInterval is how often a Backup waiting for a target or a store answer is retried.
const waitInterval = 10 * time.Second

// ScheduledFirstLook is how long after its creation NewReconciler's controller first acts on a
// Backup a ScheduledBackup created: the Backups of the schedules sharing a slot are created
// together, and one failed or started at once sends its status write and Event among the slot's
// remaining creates, making the last schedules late. A Backup created otherwise is acted on at
// once. Nothing is lost by the wait: a scheduled Backup starts a second or two later.
const ScheduledFirstLook = 2 * time.Second

// Observation is what gather read. Fields past Backup are read only in the phases that need them.
type Observation struct {
	Now    time.Time
	Backup *v1.Backup
	// FirstLook is the reconciler's ScheduledFirstLook setting (zero: none).
	FirstLook time.Duration
	// Cluster is the Backup's Cluster while it has no Job: without a Job name, to choose the
	// target (nil: not found); pending with a Job name, to build the Job from.
	Cluster *v1.Cluster
	// Without a Job name: the other Backups of the Cluster, read fresh (queue.go).
	Others []v1.Backup
	// Without a Job name: the Cluster's object store and the instances the target is chosen from.
	StoreErr   error // no object store, or its Secrets unusable
	Store      objectstore.Config
	Candidates []Candidate
	// Pending with a Job name, or running: the Job and what its Pod said.
	Job        *batchv1.Job // nil: absent, confirmed by an uncached read
	JobForeign bool         // a Job of that name exists but is not this Backup's
	PodMessage string       // the termination message of the Job's finished Pod
	// Pending with a Job name and no Job: why the Cluster could not be read, and the image of the
	// Job's init container.
	ClusterErr    error
	OperatorImage string
	// Running with a succeeded Job: the backup's metadata.json.
	Metadata    *objectstore.Metadata
	MetadataErr error
}

// Action is what act does besides the Events.
type Action int

const (
	// ActNothing writes nothing (a Job may still be deleted).
	ActNothing Action = iota
	// ActPatchStatus patches the status only.
	ActPatchStatus
	// ActCreateJob creates the Job, then patches the status.
	ActCreateJob
)

// Decision is what to do: the status to write, the Job to create or delete, the Events to emit
// and when to look again. Err, when set, fails the reconcile so that it is retried with backoff:
// the Job should be created and its Cluster cannot say how.
type Decision struct {
	Action       Action
	Status       v1.BackupStatus
	CreateJob    *batchv1.Job
	DeleteJob    *batchv1.Job
	Events       []kit.Event
	RequeueAfter time.Duration
	Err          error
}

// Decide is the Backup state machine: pending → running → completed | failed. It is pure.
// A done Backup is never acted on, so nothing recreates the Job of a finished Backup.
func Decide(o Observation) Decision {
	b := o.Backup
	if b.IsDone() || b.DeletionTimestamp != nil {
		return Decision{}
	}
	if wait := FirstLookWait(o.FirstLook, o.Now, b); wait > 0 {
		return Decision{RequeueAfter: wait}
	}
	if b.Status.JobName == "" {
		return decideNew(o)
	}
	if b.Status.Phase == v1.BackupPhasePending {
		return decideStart(o)
	}
	return decideRunning(o)
}

// FirstLookWait is how long a Backup still waits for its first step: until firstLook after its
// creation (creationTimestamp, whole seconds, so 1 to 2 s after the create for a firstLook of
// 2 s) when a ScheduledBackup created it and nothing has been written to its status yet; never
// longer than firstLook from now, whatever the clocks say. Zero: act now.
func FirstLookWait(firstLook time.Duration, now time.Time, b *v1.Backup) time.Duration {
	if firstLook <= 0 || b.Labels[v1.ScheduledBackupLabel] == "" || b.Status.Phase != "" || b.Status.JobName != "" {
		return 0
	}
	return max(0, min(firstLook, b.CreationTimestamp.Add(firstLook).Sub(now)))
}

// fail returns the decision that ends the Backup with reason and an Event of kind k.
func fail(o Observation, k kit.EventKind, format string, args ...any) Decision {
	msg := fmt.Sprintf(format, args...)
	st := *o.Backup.Status.DeepCopy()
	st.Phase, st.Error = v1.BackupPhaseFailed, msg
	now := metav1.NewTime(o.Now)
	st.CompletedAt = &now
	leaveQueue(&st, o.Backup, string(v1.BackupPhaseFailed), "failed while queued", o.Now)
	return Decision{Action: ActPatchStatus, Status: st, Events: []kit.Event{k.With(msg)}}
}

// decideNew resolves the Cluster, the object store and the target of a Backup without a Job.
func decideNew(o Observation) Decision {
	b := o.Backup
	switch {
	case o.Cluster == nil:
		return fail(o, evClusterNotFound, "Cluster %s not found", b.Spec.Cluster.Name)
	case o.StoreErr != nil:
		return fail(o, evNoObjectStore, "Cluster %s: no usable object store: %v", b.Spec.Cluster.Name, o.StoreErr)
	case b.Spec.Method == v1.BackupMethodXtraBackup:
		return fail(o, evUnsupported, "method xtrabackup needs a Percona image and a Job that mounts the target's data volume; this build runs the clone method only")
	case !b.IsOnline():
		return fail(o, evUnsupported, "offline backups (online: false) are not supported by this build; the clone method takes a consistent online copy")
	}
	if inUse, why := locationRefused(o.Cluster); inUse {
		return fail(o, evObjectStoreInUse, "Cluster %s does not hold its object store location: %s", b.Spec.Cluster.Name, why)
	}
	if newer, behind := queuePosition(b, o.Others); newer != nil {
		return supersede(o, newer)
	} else if behind != nil {
		return queued(o, behind)
	}
	deadline := startDeadline(b, o.Now)
	target, why := targetIn(o.Cluster, b.Spec.Target, o.Candidates)
	if !o.Cluster.HoldsObjectStoreLocation() {
		target, why = "", "the Cluster's object store location is not claimed yet (status.objectStoreLocation)"
	}
	if target == "" {
		if !o.Now.Before(deadline) {
			return fail(o, evTimedOut, "no instance to back up within the timeout %s: %s", b.EffectiveTimeout(), why)
		}
		d := Decision{RequeueAfter: min(waitInterval, deadline.Sub(o.Now))}
		st := *b.Status.DeepCopy()
		st.Phase = v1.BackupPhasePending
		started(&st, b, o.Now) // out of the queue: the wait for a target runs from now
		if b.Status.Phase == "" || !equality.Semantic.DeepEqual(st, b.Status) {
			d.Action, d.Status = ActPatchStatus, st
			d.Events = []kit.Event{evWaiting.With(why)}
		}
		return d
	}
	ref := objectstore.BackupRef{Cluster: o.Cluster.ObjectStoreDirName(), Name: b.Name, ID: o.Now.UTC().Format("20060102T150405Z")}
	st := *b.Status.DeepCopy()
	st.Phase, st.InstanceName, st.JobName, st.BackupID = v1.BackupPhasePending, target, b.Name, ref.ID
	st.Endpoint, st.Bucket, st.DestinationPath = o.Store.EndpointURL(), o.Store.Bucket, objectstore.BackupDir(o.Store.Path, ref)
	st.ObjectStore = o.Cluster.Spec.Backup.ObjectStore.DeepCopy()
	started(&st, b, o.Now)
	return Decision{Action: ActPatchStatus, Status: st,
		Events: []kit.Event{evPending.With(target, methodOf(b), st.Endpoint+"/"+st.Bucket+"/"+st.DestinationPath)}}
}

// locationRefused reports whether the operator found the Cluster's location held by another
// incarnation (or holding data of none), and its message.
func locationRefused(c *v1.Cluster) (bool, string) {
	st := c.Status.ObjectStoreLocation
	if st == nil || st.Phase != v1.LocationInUse || st.Location != c.ObjectStoreLocation() {
		return false, ""
	}
	return true, st.Location + ": " + st.Message
}

func methodOf(b *v1.Backup) v1.BackupMethod {
	if b.Spec.Method == "" {
		return v1.BackupMethodClone
	}
	return b.Spec.Method
}

// decideStart creates the Job of a pending Backup, or records that it exists.
func decideStart(o Observation) Decision {
	b := o.Backup
	if o.JobForeign {
		return fail(o, evJobFailed, "a Job named %s exists and does not belong to this Backup", b.Status.JobName)
	}
	if !o.Now.Before(startDeadline(b, o.Now)) {
		return fail(o, evTimedOut, "the backup did not start within the timeout %s", b.EffectiveTimeout())
	}
	st := *b.Status.DeepCopy()
	st.Phase = v1.BackupPhaseRunning
	now := metav1.NewTime(o.Now)
	st.StartedAt = &now
	if o.Job != nil {
		return Decision{Action: ActPatchStatus, Status: st}
	}
	switch c := o.Cluster; {
	case o.ClusterErr != nil:
		return Decision{Err: o.ClusterErr}
	case c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil:
		return Decision{Err: fmt.Errorf("Cluster %s lost its object store before the Job was created", c.Name)}
	}
	job := specs.BuildBackupJob(b, o.Cluster, specs.BackupJobParams{OperatorImage: o.OperatorImage,
		BackupID: b.Status.BackupID, Instance: b.Status.InstanceName})
	return Decision{Action: ActCreateJob, Status: st, CreateJob: job, Events: []kit.Event{evStarted.With(b.Status.JobName)}}
}

// decideRunning follows the Job of a running Backup until it ends, one way or another.
func decideRunning(o Observation) Decision {
	b := o.Backup
	started := b.CreationTimestamp.Time
	if b.Status.StartedAt != nil {
		started = b.Status.StartedAt.Time
	}
	deadline := started.Add(b.EffectiveTimeout())
	switch {
	case o.JobForeign:
		return fail(o, evJobFailed, "the Job %s was replaced by one that does not belong to this Backup", b.Status.JobName)
	case o.Job == nil:
		return fail(o, evJobGone, "the Job %s disappeared before it finished", b.Status.JobName)
	case kit.JobCondition(o.Job, batchv1.JobFailed):
		return fail(o, evJobFailed, "the Job %s failed: %s", b.Status.JobName, jobFailure(o))
	case kit.JobCondition(o.Job, batchv1.JobComplete):
		return decideComplete(o, deadline)
	case !o.Now.Before(deadline):
		d := fail(o, evTimedOut, "the backup did not finish within the timeout %s", b.EffectiveTimeout())
		d.DeleteJob = o.Job
		return d
	}
	return Decision{RequeueAfter: deadline.Sub(o.Now)}
}

// decideComplete marks a Backup completed only when its metadata.json exists and says what the
// Job reported; a store that cannot be read is retried until the timeout.
func decideComplete(o Observation, deadline time.Time) Decision {
	b := o.Backup
	md := o.Metadata
	if o.MetadataErr != nil {
		if errors.Is(o.MetadataErr, objectstore.ErrNotFound) {
			return fail(o, evNoMetadata, "the Job %s succeeded but %smetadata.json does not exist", b.Status.JobName, b.Status.DestinationPath)
		}
		if !o.Now.Before(deadline) {
			return fail(o, evNoMetadata, "the Job %s succeeded but metadata.json could not be read before the timeout: %v", b.Status.JobName, o.MetadataErr)
		}
		return Decision{RequeueAfter: min(waitInterval, deadline.Sub(o.Now))}
	}
	if res, ok := backupjob.ParseResult(o.PodMessage); ok && res.Checksum != "" && res.Checksum != md.Checksum() {
		return fail(o, evNoMetadata, "the Job reported %s but metadata.json records %s", res.Checksum, md.Checksum())
	}
	if !md.BelongsTo(b.Namespace) {
		return fail(o, evNoMetadata, "metadata.json under %s names namespace %s: a Cluster of the same name there shares this object store location and wrote it",
			b.Status.DestinationPath, md.Namespace)
	}
	st := *b.Status.DeepCopy()
	st.Phase, st.Error = v1.BackupPhaseCompleted, ""
	st.Checksum, st.Size, st.GTIDExecuted = md.Checksum(), md.Size, md.GTIDExecuted
	st.BinlogFile, st.BinlogPosition, st.ServerVersion = md.BinlogFile, md.BinlogPosition, md.ServerVersion
	now := metav1.NewTime(o.Now)
	st.CompletedAt = &now
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1.BackupArtifactsAvailable,
		Status: metav1.ConditionTrue, Reason: v1.ReasonArtifactsStored, LastTransitionTime: now,
		ObservedGeneration: b.Generation, Message: "the archive and metadata.json are in the object store under " + b.Status.DestinationPath})
	return Decision{Action: ActPatchStatus, Status: st,
		Events: []kit.Event{evCompleted.With(b.Name, md.Size, md.Checksum(), md.GTIDExecuted)}}
}

// jobFailure explains a failed Job: the backup's own error when its Pod wrote one, else the
// Job's condition.
func jobFailure(o Observation) string {
	if res, ok := backupjob.ParseResult(o.PodMessage); ok && res.Error != "" {
		return res.Error
	}
	for _, c := range o.Job.Status.Conditions {
		if c.Type == batchv1.JobFailed {
			return fmt.Sprintf("%s: %s", c.Reason, c.Message)
		}
	}
	return "no reason given"
}
