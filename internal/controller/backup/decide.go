package controller

import (
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// backupWaitInterval is how often a Backup waiting for a target or a store answer is retried.
const backupWaitInterval = 10 * time.Second

// backupObservation is what gatherBackup read. Fields past Backup are read only in the phases
// that need them.
type backupObservation struct {
	Now    time.Time
	Backup *v1.Backup
	// Phase "" or pending without a Job name: where the backup would go.
	ClusterMissing bool
	StoreErr       error // no object store, or its Secrets unusable
	Store          objectstore.Config
	StoreSpec      *v1.ObjectStoreConfiguration // the Cluster's, recorded in status for cleanup
	Target, Why    string
	// Pending with a Job name, or running: the Job and what its Pod said.
	Job        *batchv1.Job // nil: absent, confirmed by an uncached read
	JobForeign bool         // a Job of that name exists but is not this Backup's
	PodMessage string       // the termination message of the Job's finished Pod
	// Running with a succeeded Job: the backup's metadata.json.
	Metadata    *objectstore.Metadata
	MetadataErr error
}

type backupAction int

const (
	backupNothing   backupAction = iota
	backupPatch                  // patch Status only
	backupCreateJob              // create the Job, then patch Status
)

// backupDecision is what to do: the status to write, whether to create or delete the Job, the
// Events to emit and when to look again.
type backupDecision struct {
	Action     backupAction
	Status     v1.BackupStatus
	DeleteJob  bool
	Events     []eventRecord
	RequeueAft time.Duration
}

// decideBackup is the Backup state machine: pending → running → completed | failed. It is pure.
// A done Backup is never acted on, so nothing recreates the Job of a finished Backup.
func decideBackup(o backupObservation) backupDecision {
	b := o.Backup
	if b.IsDone() || b.DeletionTimestamp != nil {
		return backupDecision{}
	}
	if b.Status.JobName == "" {
		return decideNew(o)
	}
	if b.Status.Phase == v1.BackupPhasePending {
		return decideStart(o)
	}
	return decideRunning(o)
}

// fail returns the decision that ends the Backup with reason and an Event of kind k.
func fail(o backupObservation, k eventKind, format string, args ...any) backupDecision {
	msg := fmt.Sprintf(format, args...)
	st := *o.Backup.Status.DeepCopy()
	st.Phase, st.Error = v1.BackupPhaseFailed, msg
	now := metav1.NewTime(o.Now)
	st.CompletedAt = &now
	return backupDecision{Action: backupPatch, Status: st, Events: []eventRecord{k.with(msg)}}
}

// decideNew resolves the Cluster, the object store and the target of a Backup without a Job.
func decideNew(o backupObservation) backupDecision {
	b := o.Backup
	switch {
	case o.ClusterMissing:
		return fail(o, evBkClusterNotFound, "Cluster %s not found", b.Spec.Cluster.Name)
	case o.StoreErr != nil:
		return fail(o, evBkNoObjectStore, "Cluster %s: no usable object store: %v", b.Spec.Cluster.Name, o.StoreErr)
	case b.Spec.Method == v1.BackupMethodXtraBackup:
		return fail(o, evBkUnsupported, "method xtrabackup needs a Percona image and a Job that mounts the target's data volume; this build runs the clone method only")
	case !b.IsOnline():
		return fail(o, evBkUnsupported, "offline backups (online: false) are not supported by this build; the clone method takes a consistent online copy")
	}
	deadline := b.CreationTimestamp.Add(b.EffectiveTimeout())
	if o.Target == "" {
		if !o.Now.Before(deadline) {
			return fail(o, evBkTimedOut, "no instance to back up within the timeout %s: %s", b.EffectiveTimeout(), o.Why)
		}
		d := backupDecision{RequeueAft: min(backupWaitInterval, deadline.Sub(o.Now))}
		if b.Status.Phase == "" {
			d.Action, d.Status = backupPatch, v1.BackupStatus{Phase: v1.BackupPhasePending}
			d.Events = []eventRecord{evBkWaiting.with(o.Why)}
		}
		return d
	}
	ref := objectstore.BackupRef{Cluster: b.Spec.Cluster.Name, Name: b.Name, ID: o.Now.UTC().Format("20060102T150405Z")}
	st := *b.Status.DeepCopy()
	st.Phase, st.InstanceName, st.JobName, st.BackupID = v1.BackupPhasePending, o.Target, b.Name, ref.ID
	st.Endpoint, st.Bucket, st.DestinationPath = o.Store.EndpointURL(), o.Store.Bucket, objectstore.BackupDir(o.Store.Path, ref)
	st.ObjectStore = o.StoreSpec.DeepCopy()
	return backupDecision{Action: backupPatch, Status: st,
		Events: []eventRecord{evBkPending.with(o.Target, methodOf(b), st.Endpoint+"/"+st.Bucket+"/"+st.DestinationPath)}}
}

func methodOf(b *v1.Backup) v1.BackupMethod {
	if b.Spec.Method == "" {
		return v1.BackupMethodClone
	}
	return b.Spec.Method
}

// decideStart creates the Job of a pending Backup, or records that it exists.
func decideStart(o backupObservation) backupDecision {
	b := o.Backup
	if o.JobForeign {
		return fail(o, evBkJobFailed, "a Job named %s exists and does not belong to this Backup", b.Status.JobName)
	}
	if !o.Now.Before(b.CreationTimestamp.Add(b.EffectiveTimeout())) {
		return fail(o, evBkTimedOut, "the backup did not start within the timeout %s", b.EffectiveTimeout())
	}
	st := *b.Status.DeepCopy()
	st.Phase = v1.BackupPhaseRunning
	now := metav1.NewTime(o.Now)
	st.StartedAt = &now
	if o.Job != nil {
		return backupDecision{Action: backupPatch, Status: st}
	}
	return backupDecision{Action: backupCreateJob, Status: st, Events: []eventRecord{evBkStarted.with(b.Status.JobName)}}
}

// decideRunning follows the Job of a running Backup until it ends, one way or another.
func decideRunning(o backupObservation) backupDecision {
	b := o.Backup
	started := b.CreationTimestamp.Time
	if b.Status.StartedAt != nil {
		started = b.Status.StartedAt.Time
	}
	deadline := started.Add(b.EffectiveTimeout())
	switch {
	case o.JobForeign:
		return fail(o, evBkJobFailed, "the Job %s was replaced by one that does not belong to this Backup", b.Status.JobName)
	case o.Job == nil:
		return fail(o, evBkJobGone, "the Job %s disappeared before it finished", b.Status.JobName)
	case jobCondition(o.Job, batchv1.JobFailed):
		return fail(o, evBkJobFailed, "the Job %s failed: %s", b.Status.JobName, jobFailure(o))
	case jobCondition(o.Job, batchv1.JobComplete):
		return decideComplete(o, deadline)
	case !o.Now.Before(deadline):
		d := fail(o, evBkTimedOut, "the backup did not finish within the timeout %s", b.EffectiveTimeout())
		d.DeleteJob = true
		return d
	}
	return backupDecision{RequeueAft: deadline.Sub(o.Now)}
}

// decideComplete marks a Backup completed only when its metadata.json exists and says what the
// Job reported; a store that cannot be read is retried until the timeout.
func decideComplete(o backupObservation, deadline time.Time) backupDecision {
	b := o.Backup
	md := o.Metadata
	if o.MetadataErr != nil {
		if errors.Is(o.MetadataErr, objectstore.ErrNotFound) {
			return fail(o, evBkNoMetadata, "the Job %s succeeded but %smetadata.json does not exist", b.Status.JobName, b.Status.DestinationPath)
		}
		if !o.Now.Before(deadline) {
			return fail(o, evBkNoMetadata, "the Job %s succeeded but metadata.json could not be read before the timeout: %v", b.Status.JobName, o.MetadataErr)
		}
		return backupDecision{RequeueAft: min(backupWaitInterval, deadline.Sub(o.Now))}
	}
	if res, ok := backupjob.ParseResult(o.PodMessage); ok && res.Checksum != "" && res.Checksum != md.Checksum() {
		return fail(o, evBkNoMetadata, "the Job reported %s but metadata.json records %s", res.Checksum, md.Checksum())
	}
	if !md.BelongsTo(b.Namespace) {
		return fail(o, evBkNoMetadata, "metadata.json under %s names namespace %s: a Cluster of the same name there shares this object store location and wrote it",
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
	return backupDecision{Action: backupPatch, Status: st,
		Events: []eventRecord{evBkCompleted.with(b.Name, md.Size, md.Checksum(), md.GTIDExecuted)}}
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == "True" {
			return true
		}
	}
	return false
}

// jobFailure explains a failed Job: the backup's own error when its Pod wrote one, else the
// Job's condition.
func jobFailure(o backupObservation) string {
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
