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
	// MaxConcurrentReconciles defaults to DefaultScheduledBackupWorkers.
	MaxConcurrentReconciles int
	// StatusDelay is how long after creating a slot's Backup the status recording it is written
	// (see sbDecision.statusCanWait); zero writes it at once. SetupWithManager sets
	// DefaultStatusDelay when it is zero.
	StatusDelay time.Duration

	// cacheIndexed says Client is the manager's cache with the Backup index of SetupWithManager.
	cacheIndexed bool
	// expect tracks this process's writes the cache may not show yet.
	expect sbExpectations
}

// Reconcile gathers, decides and acts for one ScheduledBackup. A decision to create a Backup is
// taken again on a fresh read, and once more if the name turns out to be taken.
func (r *ScheduledBackupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o, err := r.gather(ctx, req.NamespacedName)
	if o == nil && err == nil {
		r.expect.forget(req.NamespacedName)
	}
	if err != nil || o == nil {
		return ctrl.Result{}, err
	}
	d := decideScheduledBackup(*o)
	if d.needsFreshLook(*o) && !r.expect.satisfied(o.Schedule, o.Children) {
		if alive, err := r.refresh(ctx, o); err != nil || !alive {
			return ctrl.Result{}, err
		}
		d = decideScheduledBackup(*o)
	}
	if d.Create != nil {
		created, err := r.create(ctx, o.Schedule, d)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !created {
			return r.nameTaken(ctx, o, d.Create.Name)
		}
		if r.StatusDelay > 0 && d.statusCanWait() {
			r.expect.unrecorded(o.Schedule, d.Create.Name)
			return ctrl.Result{RequeueAfter: r.StatusDelay}, nil
		}
	}
	return r.act(ctx, o.Schedule, d)
}

// nameTaken handles a create that found its name taken: a Backup carrying this schedule's label
// is adopted by the next reconcile; any other is a collision, decided with it as the occupant.
func (r *ScheduledBackupReconciler) nameTaken(ctx context.Context, o *sbObservation, name string) (ctrl.Result, error) {
	occ, err := r.occupant(ctx, o.Schedule, name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if occ == nil {
		r.expect.created(o.Schedule, name) // the cache lags: re-read before deciding again
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	o.Occupant = occ
	d := decideScheduledBackup(*o)
	if d.Create != nil {
		return ctrl.Result{}, fmt.Errorf("backup %s: the name is taken and the decision still creates it", name)
	}
	return r.act(ctx, o.Schedule, d)
}

// conflictOr turns a lost optimistic-lock race into a quick retry and passes other errors on.
func conflictOr(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}
