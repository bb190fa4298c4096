package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
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
	// Rush is shared with the Backup controller of the process; the reconciler makes its own when
	// nil.
	Rush *SlotRush

	// cacheIndexed says Client is the manager's cache with the Backup index of SetupWithManager.
	cacheIndexed bool
	// expect tracks this process's writes the cache may not show yet.
	expect   sbExpectations
	rushOnce sync.Once
}

// rush is Rush, made on first use when none was given.
func (r *ScheduledBackupReconciler) rush() *SlotRush {
	r.rushOnce.Do(func() {
		if r.Rush == nil {
			r.Rush = &SlotRush{}
		}
	})
	return r.Rush
}

// Reconcile gathers, decides and acts for one ScheduledBackup. A decision to create a Backup is
// taken again on a fresh read, and once more if the name turns out to be taken. While other
// schedules' Backups are due, everything but creating this one's waits (see SlotRush).
func (r *ScheduledBackupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	defer func() {
		if err != nil {
			// Retried with backoff, not at its slot: a create that fails no longer holds the
			// others' writes. The next reconcile that succeeds says when it is due again.
			r.rush().expect(req.NamespacedName, time.Time{}, r.Clock.Now())
		}
	}()
	o, err := r.gather(ctx, req.NamespacedName)
	if o == nil && err == nil {
		r.expect.forget(req.NamespacedName)
		r.rush().forget(req.NamespacedName, r.Clock.Now())
	}
	if err != nil || o == nil {
		return ctrl.Result{}, err
	}
	d := decideScheduledBackup(*o)
	if wait, held := r.holds(req.NamespacedName, d, *o); held {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if d.needsFreshLook(*o) && !r.expect.satisfied(o.Schedule, o.Children) {
		if alive, err := r.refresh(ctx, o); err != nil || !alive {
			return ctrl.Result{}, err
		}
		d = decideScheduledBackup(*o)
		if wait, held := r.holds(req.NamespacedName, d, *o); held {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	if d.Create != nil {
		created, err := r.create(ctx, o.Schedule, d)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !created {
			return r.nameTaken(ctx, o, d.Create.Name)
		}
		now := r.Clock.Now()
		r.rush().created(client.ObjectKeyFromObject(d.Create), now)
		r.rush().expect(req.NamespacedName, d.nextCreate(o.Now), now)
		if !d.statusCanWait() {
			return r.act(ctx, o.Schedule, d)
		}
		if wait, held := r.rush().hold(heldObject{heldSchedule, req.NamespacedName}, now, lookAgain(*o, d), false); held {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	return r.act(ctx, o.Schedule, d)
}

// holds records when a decision that creates nothing expects the schedule's next Backup, and
// says whether its writes wait, and how long at most: for the Backups due and, once held for them,
// for the end of the Backup this process created and has not recorded yet, so that its slot and
// its end (a fast failure, typically) take one status write. A decision that creates a Backup goes
// on: its create is what the others wait for.
func (r *ScheduledBackupReconciler) holds(key types.NamespacedName, d sbDecision, o sbObservation) (time.Duration, bool) {
	if d.Create != nil {
		return 0, false
	}
	now := r.Clock.Now()
	r.rush().expect(key, d.nextCreate(o.Now), now)
	if !d.writes(o) {
		return 0, false
	}
	return r.rush().hold(heldObject{heldSchedule, key}, now, lookAgain(o, d), o.unrecordedRunning())
}

// lookAgain is when the schedule must be reconciled whatever holds it: its next slot, or sooner.
func lookAgain(o sbObservation, d sbDecision) time.Time {
	if d.RequeueAfter <= 0 {
		return time.Time{}
	}
	return o.Now.Add(d.RequeueAfter)
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
	r.rush().expect(client.ObjectKeyFromObject(o.Schedule), d.nextCreate(o.Now), r.Clock.Now())
	return r.act(ctx, o.Schedule, d)
}

// conflictOr turns a lost optimistic-lock race into a quick retry and passes other errors on.
func conflictOr(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}
