package scheduledbackup

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// act carries out d for o's schedule: create the Backup, then record the status (reset
// skipImmediately, emit the Events) and prune, then put the schedule back for its next look.
//
// A create whose name turns out to be taken is looked at again at once: that look reads the name
// fresh and adopts the Backup holding it, or skips the slot for it. When the rest of d may wait
// (statusCanWait) and the reconciler has a queue, the status, the pruning and the Events wait for
// a look at the lowest priority, woken by the Backup's end or after recordDelay: at a slot many
// schedules share it comes after their creates, even when the slot runs late and the previous
// slot is still to be recorded, and it records the Backup's end in the same write when that came
// first. The next slot's due look is set as after any other look.
func (r *Reconciler) act(ctx context.Context, o Observation, d Decision) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(o.Schedule)
	canWait := d.statusCanWait(o)
	if d.Create != nil {
		created, err := r.create(ctx, o.Schedule, d, canWait)
		switch {
		case err != nil:
			return ctrl.Result{}, err
		case !created:
			r.expect.created(o.Schedule, d.Create.Name)
			return ctrl.Result{RequeueAfter: kit.ConflictRetry}, nil
		}
	}
	// Should the record look not have come by the next slot, the due look set below is merged
	// into it by the queue, at the priority of a due look.
	if !canWait || !r.recordLater(key) {
		if err := r.record(ctx, o.Schedule, d); err != nil {
			return kit.ConflictOr(err)
		}
	}
	return r.lookAgainAfter(key, d.RequeueAfter), nil
}

// create creates d's Backup; false when its name is already taken. With canWait its Event waits
// for the status write that records its slot.
func (r *Reconciler) create(ctx context.Context, sb *v1.ScheduledBackup, d Decision, canWait bool) (bool, error) {
	if err := r.Client.Create(ctx, d.Create); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, fmt.Errorf("creating Backup %s: %w", d.Create.Name, err)
	}
	r.expect.created(sb, d.Create.Name)
	observeCreated(sb, d, r.Clock.Now())
	log.FromContext(ctx).Info("created backup", "backup", d.Create.Name)
	if canWait {
		// Its Event, and those only d knows, come with the status that records its slot, which
		// may be written later.
		r.expect.unrecorded(sb, d.Create.Name, d.Status.LastScheduleTime.UTC(), append([]kit.Event{d.CreateEvent}, d.Events...))
	} else {
		kit.Emit(r.Recorder, sb, []kit.Event{d.CreateEvent})
	}
	return true, nil
}

// record patches the status, emits the Events of the creates it records (written now or
// before, with the Events their decisions left to this write), resets skipImmediately, emits
// d's Events not already emitted with them, then prunes and says so.
func (r *Reconciler) record(ctx context.Context, sb *v1.ScheduledBackup, d Decision) error {
	updated := sb.DeepCopy()
	if !statusEqual(sb.Status, d.Status) {
		updated.Status = d.Status
		if err := kit.PatchStatus(ctx, r.Client, updated, sb); err != nil {
			return err
		}
		r.expect.wrote(updated)
		countMissed(sb, d)
	}
	waited := r.expect.recorded(updated)
	kit.Emit(r.Recorder, updated, waited)
	if d.ResetSkipImmediately {
		base := updated.DeepCopy()
		updated.Spec.SkipImmediately = new(bool)
		if err := kit.PatchSpec(ctx, r.Client, updated, base); err != nil {
			return err
		}
		r.expect.wrote(updated)
	}
	kit.Emit(r.Recorder, updated, notIn(d.Events, waited))
	if err := r.prune(ctx, updated, d.Prune); err != nil {
		return err
	}
	kit.Emit(r.Recorder, updated, d.PruneEvents)
	return nil
}

// notIn are the Events of evs not among emitted: a condition transition a decision left to a
// later write is derived again by the decision that writes it.
func notIn(evs, emitted []kit.Event) []kit.Event {
	var out []kit.Event
	for _, e := range evs {
		if !slices.Contains(emitted, e) {
			out = append(out, e)
		}
	}
	return out
}

// forget drops what is remembered about a ScheduledBackup that is gone.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.expect.forget(key)
	r.timers.stop(key)
	forgetSchedule(key)
}

// prune deletes history beyond the limits without deleting remote data (see Prune). A conflict
// means a Backup changed since it was read; the caller retries with a new decision. A Backup
// deleted, or found gone, is remembered so a cache still showing it does not have it deleted again.
func (r *Reconciler) prune(ctx context.Context, sb *v1.ScheduledBackup, steps []Prune) error {
	for _, s := range steps {
		b := s.Backup.DeepCopy()
		if s.KeepFirst {
			base := b.DeepCopy()
			b.Spec.DeletionPolicy = v1.DeletionPolicyKeep
			if err := kit.PatchSpec(ctx, r.Client, b, base); apierrors.IsNotFound(err) {
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
