package backup

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// errForeignBackup marks a directory whose metadata.json names another namespace.
var errForeignBackup = errors.New("the backup directory belongs to a Cluster of another namespace")

// deleteRemote deletes the backup directory ref: metadata.json first, then the archive and
// anything else under it, then its open multipart uploads. A directory whose metadata.json names
// another namespace than the Backup's was written by a Cluster of the same name there sharing
// the location: it is refused (errForeignBackup), untouched.
func (r *Reconciler) deleteRemote(ctx context.Context, o *finalizerObservation, ref objectstore.BackupRef) error {
	store, err := r.openStore(o.Store)
	if err != nil {
		return fmt.Errorf("opening the object store: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	md, err := store.ReadMetadata(ctx, ref)
	switch {
	case err == nil && !md.BelongsTo(o.Backup.Namespace):
		return fmt.Errorf("%w: its metadata.json names namespace %s", errForeignBackup, md.Namespace)
	case err != nil && !errors.Is(err, objectstore.ErrNotFound) && !errors.Is(err, objectstore.ErrInvalid):
		return fmt.Errorf("reading metadata.json before deleting: %w", err)
	}
	return store.DeleteBackup(ctx, ref)
}

// actFinalizer performs the decision: finalizer patches, the Job deletion, the RemoteCleanup
// condition and the Events.
func (r *Reconciler) actFinalizer(ctx context.Context, o *finalizerObservation, d finalizerDecision) (ctrl.Result, error) {
	b := o.Backup
	logger := log.FromContext(ctx).WithValues("backup", b.Name)
	switch d.Action {
	case finNothing:
		return ctrl.Result{}, nil
	case finAdd:
		if err := r.patchFinalizer(ctx, b, true); err != nil {
			return ctrl.Result{}, err
		}
	case finDeleteJob:
		fg := client.PropagationPolicy("Foreground")
		if err := r.Client.Delete(ctx, o.Job, fg); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting Job %s of the deleted Backup: %w", o.Job.Name, err)
		}
		fallthrough
	case finWait:
		if err := r.writeCleanupCondition(ctx, b, d); err != nil {
			return ctrl.Result{}, err
		}
	case finRemove:
		if err := r.writeCleanupCondition(ctx, b, d); err != nil {
			logger.Info("could not record the cleanup before removing the finalizer", "error", err.Error())
		}
		if err := r.patchFinalizer(ctx, b, false); err != nil {
			return ctrl.Result{}, err
		}
	}
	logger.Info("remote cleanup", "action", d.Action.String(), "deleting", b.DeletionTimestamp != nil,
		"condition", conditionReason(d), "requeueAfter", d.RequeueAfter)
	kit.Emit(r.Recorder, b, d.Events)
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// patchFinalizer adds or removes the finalizer under an optimistic lock; b is updated in place.
func (r *Reconciler) patchFinalizer(ctx context.Context, b *v1.Backup, add bool) error {
	old := b.DeepCopy()
	if add {
		controllerutil.AddFinalizer(b, v1.RemoteCleanupFinalizer)
	} else {
		controllerutil.RemoveFinalizer(b, v1.RemoteCleanupFinalizer)
	}
	err := kit.PatchSpec(ctx, r.Client, b, old)
	if !add && apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// writeCleanupCondition sets the RemoteCleanup condition unless it already says the same; b is
// updated in place.
func (r *Reconciler) writeCleanupCondition(ctx context.Context, b *v1.Backup, d finalizerDecision) error {
	if d.Condition == nil {
		return nil
	}
	cur := meta.FindStatusCondition(b.Status.Conditions, v1.BackupRemoteCleanup)
	if cur != nil && cur.Status == d.Condition.Status && cur.Reason == d.Condition.Reason && cur.Message == d.Condition.Message {
		return nil
	}
	old := b.DeepCopy()
	meta.SetStatusCondition(&b.Status.Conditions, *d.Condition)
	if err := kit.PatchStatus(ctx, r.Client, b, old); err != nil {
		*b = *old
		return err
	}
	return nil
}

func conditionReason(d finalizerDecision) string {
	if d.Condition == nil {
		return ""
	}
	return d.Condition.Reason
}
