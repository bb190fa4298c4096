package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// conflictRetry is how soon a reconcile that lost an optimistic-lock race runs again.
const conflictRetry = 100 * time.Millisecond

// ScheduledBackupReconciler creates Backups on each ScheduledBackup's cron cadence: exactly one
// Backup per slot, whatever the operator crashes through, since names are deterministic and
// children are adopted by label.
type ScheduledBackupReconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server; it re-checks children before any Backup is created.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// MaxConcurrentReconciles defaults to defaultScheduledBackupWorkers.
	MaxConcurrentReconciles int
}

// Reconcile gathers, decides and acts for one ScheduledBackup.
func (r *ScheduledBackupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o, err := r.gather(ctx, req.NamespacedName)
	if err != nil || o == nil {
		return ctrl.Result{}, err
	}
	d := decideScheduledBackup(*o)
	if d.needsFreshLook(*o) {
		if err := r.refresh(ctx, o, d.Create.Name); err != nil {
			return ctrl.Result{}, err
		}
		d = decideScheduledBackup(*o)
	}
	return r.act(ctx, o.Schedule, d)
}

// gather reads the ScheduledBackup, its children and its Cluster through the cache; nil when the
// ScheduledBackup is gone or being deleted.
func (r *ScheduledBackupReconciler) gather(ctx context.Context, key client.ObjectKey) (*sbObservation, error) {
	var sb v1.ScheduledBackup
	if err := r.Client.Get(ctx, key, &sb); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if sb.DeletionTimestamp != nil {
		return nil, nil
	}
	o := &sbObservation{Now: r.Clock.Now(), Schedule: &sb}
	var err error
	if o.Children, err = listChildren(ctx, r.Client, &sb); err != nil {
		return nil, err
	}
	var cluster v1.Cluster
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: sb.Namespace, Name: sb.Spec.Cluster.Name}, &cluster); {
	case err == nil:
		o.Cluster = &cluster
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading Cluster %s: %w", sb.Spec.Cluster.Name, err)
	}
	return o, nil
}

// refresh re-reads the children and the object at name from the API server, so a cache that
// lags behind this operator's own writes can never yield a second Backup or an overlap.
func (r *ScheduledBackupReconciler) refresh(ctx context.Context, o *sbObservation, name string) error {
	var err error
	if o.Children, err = listChildren(ctx, r.APIReader, o.Schedule); err != nil {
		return err
	}
	o.Fresh, o.Occupant = true, nil
	var occ v1.Backup
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: o.Schedule.Namespace, Name: name}, &occ); {
	case err == nil && occ.Labels[v1.ScheduledBackupLabel] != o.Schedule.Name:
		o.Occupant = &occ
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("reading Backup %s: %w", name, err)
	}
	return nil
}

// listChildren lists the Backups carrying sb's label, whatever their owner references.
func listChildren(ctx context.Context, c client.Reader, sb *v1.ScheduledBackup) ([]v1.Backup, error) {
	var list v1.BackupList
	if err := c.List(ctx, &list, client.InNamespace(sb.Namespace),
		client.MatchingLabels{v1.ScheduledBackupLabel: sb.Name}); err != nil {
		return nil, fmt.Errorf("listing the Backups of ScheduledBackup %s: %w", sb.Name, err)
	}
	return list.Items, nil
}

// act performs d: create, patch status, reset skipImmediately, prune, then emit Events.
func (r *ScheduledBackupReconciler) act(ctx context.Context, sb *v1.ScheduledBackup, d sbDecision) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	if d.Create != nil {
		if err := r.Client.Create(ctx, d.Create); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// Someone took the name between the fresh read and now: decide again.
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, fmt.Errorf("creating Backup %s: %w", d.Create.Name, err)
		}
		logger.Info("created backup", "backup", d.Create.Name)
		emit(r.Recorder, sb, []eventRecord{d.CreateEvent})
	}
	updated := sb.DeepCopy()
	if !statusEqual(sb.Status, d.Status) {
		updated.Status = d.Status
		if err := patchStatus(ctx, r.Client, updated, sb); err != nil {
			return conflictOr(err)
		}
	}
	if d.ResetSkipImmediately {
		base := updated.DeepCopy()
		updated.Spec.SkipImmediately = new(bool)
		if err := patchSpec(ctx, r.Client, updated, base); err != nil {
			return conflictOr(err)
		}
	}
	if err := r.prune(ctx, d.Prune); err != nil {
		return ctrl.Result{}, err
	}
	emit(r.Recorder, updated, d.Events)
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// prune deletes history beyond the limits. Each Backup gets deletionPolicy keep first, so
// deleting the object never deletes its remote data.
func (r *ScheduledBackupReconciler) prune(ctx context.Context, backups []*v1.Backup) error {
	for _, b := range backups {
		b = b.DeepCopy()
		if b.Spec.DeletionPolicy != v1.DeletionPolicyKeep {
			base := b.DeepCopy()
			b.Spec.DeletionPolicy = v1.DeletionPolicyKeep
			if err := patchSpec(ctx, r.Client, b, base); apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				return err
			}
		}
		uid := b.UID
		if err := r.Client.Delete(ctx, b, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Backup %s beyond the history limit: %w", b.Name, err)
		}
	}
	return nil
}

// conflictOr turns a lost optimistic-lock race into a quick retry and passes other errors on.
func conflictOr(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}
