package backup

import (
	"errors"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

const (
	// cleanupMinBackoff and cleanupMaxBackoff bound the wait before a cleanup that could not
	// proceed is tried again; the wait grows with the time the RemoteCleanup condition has been
	// False, so it roughly doubles on each attempt and survives operator restarts.
	cleanupMinBackoff = 5 * time.Second
	cleanupMaxBackoff = 5 * time.Minute
	// cleanupRefusedRecheck is the safety net of a refused cleanup: the Cluster watch is what
	// resumes it when the referencing Cluster changes or goes.
	cleanupRefusedRecheck = 10 * time.Minute
	// cleanupJobPoll is how often a deleted running Backup checks that its Job is gone; the Job
	// watch usually answers first.
	cleanupJobPoll = 5 * time.Second
)

// finalizerObservation is what gatherFinalizer read for the remote-cleanup finalizer.
type finalizerObservation struct {
	Now    time.Time
	Backup *v1.Backup
	// spec.deletionPolicy empty: the Backup's Cluster, nil when it does not exist (read from the
	// API server when the Backup is being deleted with the finalizer).
	Cluster *v1.Cluster
	// Being deleted with the finalizer: the Clusters (not being deleted) whose
	// bootstrap.recovery names this Backup, sorted; the Backup's own Job while the Backup had not
	// finished; and the store holding its recorded directory.
	ReferencedBy []string
	Job          *batchv1.Job
	Store        objectstore.Config
	StoreErr     error
}

type finalizerAction int

const (
	finNothing   finalizerAction = iota
	finAdd                       // add the finalizer
	finRemove                    // write Condition (best effort), then remove the finalizer
	finWait                      // write Condition and look again after RequeueAfter
	finDeleteJob                 // delete the running Job, then as finWait
	finCleanup                   // delete the remote directory, then as finRemove
)

func (a finalizerAction) String() string {
	return [...]string{"nothing", "add-finalizer", "remove-finalizer", "wait", "delete-job", "cleanup"}[a]
}

// finalizerDecision is what to do with the finalizer: the action, the RemoteCleanup condition to
// write (nil: none), the Events, when to look again and, for finCleanup, what to delete.
type finalizerDecision struct {
	Action       finalizerAction
	Condition    *metav1.Condition
	Events       []kit.Event
	RequeueAfter time.Duration
	Ref          objectstore.BackupRef
}

// decideFinalizer keeps the remote-cleanup finalizer on a Backup exactly while its effective
// deletion policy is delete, and decides what its deletion does. It is pure.
func decideFinalizer(o finalizerObservation) finalizerDecision {
	b := o.Backup
	has := controllerutil.ContainsFinalizer(b, v1.RemoteCleanupFinalizer)
	if b.DeletionTimestamp != nil {
		if !has {
			return finalizerDecision{}
		}
		return decideCleanup(o)
	}
	if b.Spec.DeletionPolicy == "" && (o.Cluster == nil || o.Cluster.DeletionTimestamp != nil) {
		// The Cluster's default is unknown: what was decided while it existed stands, so a Cluster
		// deleted just before its Backups are collected does not turn their cleanup off.
		return finalizerDecision{}
	}
	policy, source := b.EffectiveDeletionPolicy(o.Cluster), "spec.deletionPolicy"
	if b.Spec.DeletionPolicy == "" {
		source = "the default of Cluster " + b.Spec.Cluster.Name
	}
	switch want := policy == v1.DeletionPolicyDelete; {
	case want && !has:
		return finalizerDecision{Action: finAdd, Events: []kit.Event{evCleanupEnabled.With(source)}}
	case !want && has:
		return finalizerDecision{Action: finRemove, Events: []kit.Event{evCleanupDisabled.With(policy, source)}}
	}
	return finalizerDecision{}
}

// decideCleanup decides the deletion of a Backup that carries the finalizer. The Backup's own
// spec decides: keep (as the ScheduledBackup's pruning sets) deletes nothing; delete deletes the
// recorded directory. Empty follows the Cluster's default while the Cluster exists (it may have
// turned to keep before the finalizer was removed), else what the finalizer says: delete.
func decideCleanup(o finalizerObservation) finalizerDecision {
	b := o.Backup
	dir := b.Status.DestinationPath
	clusterKeeps := b.Spec.DeletionPolicy == "" && o.Cluster != nil && o.Cluster.DeletionTimestamp == nil &&
		b.EffectiveDeletionPolicy(o.Cluster) != v1.DeletionPolicyDelete
	switch {
	case b.Spec.DeletionPolicy == v1.DeletionPolicyKeep, clusterKeeps:
		return finalizerDecision{Action: finRemove, Events: []kit.Event{evCleanupKept.With(orNothing(dir))}}
	case b.Annotations[v1.RemoteCleanupBypassAnnotation] == "true":
		return finalizerDecision{Action: finRemove,
			Condition: cleanupCondition(o, metav1.ConditionTrue, v1.ReasonCleanupBypassed,
				fmt.Sprintf("%s is set: the remote objects under %s are kept", v1.RemoteCleanupBypassAnnotation, orNothing(dir))),
			Events: []kit.Event{evCleanupBypassed.With(v1.RemoteCleanupBypassAnnotation, orNothing(dir))}}
	case dir == "":
		msg := "the backup never recorded a destination: nothing was written to the object store"
		return finalizerDecision{Action: finRemove,
			Condition: cleanupCondition(o, metav1.ConditionTrue, v1.ReasonCleanupDone, msg),
			Events:    []kit.Event{evCleanupNothing.With()}}
	case len(o.ReferencedBy) > 0:
		names := strings.Join(o.ReferencedBy, ", ")
		msg := fmt.Sprintf("Cluster %s bootstraps from this Backup (spec.bootstrap.recovery.backup): its remote objects are not deleted while it exists", names)
		return cleanupWait(o, v1.ReasonCleanupRefused, msg, cleanupRefusedRecheck, evCleanupRefused.With(msg, bypassHint))
	case o.Job != nil:
		msg := fmt.Sprintf("the Backup was deleted while %s; its Job %s is deleted first so that nothing writes after the partial upload is removed", b.Status.Phase, o.Job.Name)
		d := cleanupWait(o, v1.ReasonCleanupWaitingForJob, msg, cleanupJobPoll, evCleanupStopJob.With(o.Job.Name, dir))
		if o.Job.DeletionTimestamp == nil {
			d.Action = finDeleteJob
		} else {
			d.Events = nil
		}
		return d
	case o.StoreErr != nil:
		msg := fmt.Sprintf("cannot reach the object store holding %s: %v", dir, o.StoreErr)
		return cleanupWait(o, v1.ReasonCleanupUnresolved, msg, backoffFor(o), evCleanupBlocked.With(msg, bypassHint))
	}
	ref, err := recordedRef(b)
	if err != nil {
		return cleanupWait(o, v1.ReasonCleanupUnresolved, err.Error(), backoffFor(o), evCleanupBlocked.With(err.Error(), bypassHint))
	}
	return finalizerDecision{Action: finCleanup, Ref: ref}
}

// recordedRef is the backup directory the Backup recorded, checked to be this Backup's own (its
// name and backup id), so a status edited by hand cannot make the cleanup delete another backup.
// The directory's cluster part is the Cluster's spec.backup.serverName (its name unless set) as
// it was when the backup ran, so it is not compared with the Cluster's name.
func recordedRef(b *v1.Backup) (objectstore.BackupRef, error) {
	_, ref, err := objectstore.ParseBackupDir(b.Status.DestinationPath)
	if err != nil {
		return ref, fmt.Errorf("status.destinationPath: %w", err)
	}
	if ref.Name != b.Name || (b.Status.BackupID != "" && ref.ID != b.Status.BackupID) {
		return ref, fmt.Errorf("status.destinationPath %s is not the directory of Backup %s of Cluster %s (backup id %s)",
			b.Status.DestinationPath, b.Name, b.Spec.Cluster.Name, b.Status.BackupID)
	}
	return ref, nil
}

// decideCleanupResult is what follows the deletion of the remote directory: the finalizer goes
// on success; a failure is surfaced and retried with backoff.
func decideCleanupResult(o finalizerObservation, err error) finalizerDecision {
	b := o.Backup
	dir := b.Status.Endpoint + "/" + b.Status.Bucket + "/" + b.Status.DestinationPath
	if errors.Is(err, errForeignBackup) {
		msg := fmt.Sprintf("not deleting %s: %v; two Clusters of the same name share this object store location", dir, err)
		return cleanupWait(o, v1.ReasonCleanupForeign, msg, backoffFor(o), evCleanupBlocked.With(msg, bypassHint))
	}
	if err != nil {
		return cleanupFailed(o, fmt.Sprintf("deleting %s: %v", dir, err))
	}
	return finalizerDecision{Action: finRemove,
		Condition: cleanupCondition(o, metav1.ConditionTrue, v1.ReasonCleanupDone, "deleted the archive and metadata.json under "+dir),
		Events:    []kit.Event{evCleanupDone.With(dir)}}
}

// decideCleanupReadFailed is what follows a cleanup that could not read what it decides on
// from the API server: nothing is deleted; the condition and a Warning say why, and it is
// retried with backoff.
func decideCleanupReadFailed(o finalizerObservation, err error) finalizerDecision {
	return cleanupFailed(o, fmt.Sprintf("reading what the cleanup decides on from the API server: %v", err))
}

// cleanupFailed surfaces a failed cleanup (CleanupFailed and a Warning) and retries it with backoff.
func cleanupFailed(o finalizerObservation, msg string) finalizerDecision {
	wait := backoffFor(o)
	return cleanupWait(o, v1.ReasonCleanupFailed, msg, wait, evCleanupFailed.With(msg, wait))
}

// bypassHint tells a user how to let the deletion go on without the cleanup.
var bypassHint = fmt.Sprintf("set the annotation %s=true to delete this Backup and keep its remote objects", v1.RemoteCleanupBypassAnnotation)

func cleanupWait(o finalizerObservation, reason, msg string, after time.Duration, ev kit.Event) finalizerDecision {
	return finalizerDecision{Action: finWait, Condition: cleanupCondition(o, metav1.ConditionFalse, reason, msg),
		Events: []kit.Event{ev}, RequeueAfter: after}
}

func cleanupCondition(o finalizerObservation, status metav1.ConditionStatus, reason, msg string) *metav1.Condition {
	return &metav1.Condition{Type: v1.BackupRemoteCleanup, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: o.Backup.Generation, LastTransitionTime: metav1.NewTime(o.Now)}
}

// backoffFor is the wait before the next attempt: as long as the RemoteCleanup condition has
// been False, within [cleanupMinBackoff, cleanupMaxBackoff].
func backoffFor(o finalizerObservation) time.Duration {
	c := meta.FindStatusCondition(o.Backup.Status.Conditions, v1.BackupRemoteCleanup)
	if c == nil || c.Status != metav1.ConditionFalse {
		return cleanupMinBackoff
	}
	return min(max(o.Now.Sub(c.LastTransitionTime.Time), cleanupMinBackoff), cleanupMaxBackoff)
}

func orNothing(dir string) string {
	if dir == "" {
		return "(none recorded)"
	}
	return dir
}
