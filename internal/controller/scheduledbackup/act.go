package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// create creates d's Backup, if any; false when its name is already taken.
func (r *ScheduledBackupReconciler) create(ctx context.Context, sb *v1.ScheduledBackup, d sbDecision) (bool, error) {
	if d.Create == nil {
		return false, nil
	}
	if err := r.Client.Create(ctx, d.Create); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, fmt.Errorf("creating Backup %s: %w", d.Create.Name, err)
	}
	r.expect.created(sb, d.Create.Name)
	log.FromContext(ctx).Info("created backup", "backup", d.Create.Name)
	if d.statusCanWait() {
		// Its status may be held (see SlotRush): the Event comes with it, so that no Event is
		// sent while the slot's other Backups are still to be created.
		r.expect.unrecorded(sb, d.Create.Name, d.Status.LastScheduleTime.UTC(), d.CreateEvent)
	} else {
		emit(r.Recorder, sb, []eventRecord{d.CreateEvent})
	}
	return true, nil
}

// act performs the rest of d once its Backup exists: patch the status, emit the Events of the
// creates it records (written now or before), reset skipImmediately, emit Events, then prune and say so.
func (r *ScheduledBackupReconciler) act(ctx context.Context, sb *v1.ScheduledBackup, d sbDecision) (ctrl.Result, error) {
	updated := sb.DeepCopy()
	if !statusEqual(sb.Status, d.Status) {
		updated.Status = d.Status
		if err := patchStatus(ctx, r.Client, updated, sb); err != nil {
			return conflictOr(err)
		}
		r.expect.wrote(updated)
	}
	emit(r.Recorder, updated, r.expect.recorded(updated))
	if d.ResetSkipImmediately {
		base := updated.DeepCopy()
		updated.Spec.SkipImmediately = new(bool)
		if err := patchSpec(ctx, r.Client, updated, base); err != nil {
			return conflictOr(err)
		}
		r.expect.wrote(updated)
	}
	emit(r.Recorder, updated, d.Events)
	if err := r.prune(ctx, updated, d.Prune); err != nil {
		return conflictOr(err)
	}
	emit(r.Recorder, updated, d.PruneEvents)
	r.rush().wrote(heldObject{heldSchedule, client.ObjectKeyFromObject(sb)})
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// prune deletes history beyond the limits without deleting remote data (see sbPrune). A conflict
// means a Backup changed since it was read; the caller retries with a new decision. A Backup
// deleted, or found gone, is remembered so a cache still showing it does not have it deleted again.
func (r *ScheduledBackupReconciler) prune(ctx context.Context, sb *v1.ScheduledBackup, steps []sbPrune) error {
	for _, s := range steps {
		b := s.Backup.DeepCopy()
		if s.KeepFirst {
			base := b.DeepCopy()
			b.Spec.DeletionPolicy = v1.DeletionPolicyKeep
			if err := patchSpec(ctx, r.Client, b, base); apierrors.IsNotFound(err) {
				r.expect.deleted(sb, b.UID)
				continue
			} else if err != nil {
				return err
			}
		}
		uid, rv := b.UID, b.ResourceVersion
		if err := r.Client.Delete(ctx, b, client.Preconditions{UID: &uid, ResourceVersion: &rv}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Backup %s beyond the history limit: %w", b.Name, err)
		}
		r.expect.deleted(sb, uid)
	}
	return nil
}
