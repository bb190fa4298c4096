package scheduledbackup

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// DefaultWorkers is how many ScheduledBackups are reconciled in parallel unless configured: the
// work is mostly waiting on the API server, and many schedules often share a slot, whose Backups
// should not wait in line for a free worker.
const DefaultWorkers = 50

// DefaultMinInterval is the operator's default --min-schedule-interval: a schedule firing more
// often than once a minute would keep a backup running all the time.
const DefaultMinInterval = time.Minute

// Reconciler creates Backups on each ScheduledBackup's cron cadence: exactly one Backup per slot,
// whatever the operator crashes through, since names are deterministic and children are adopted
// by label.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server; it re-checks children before any Backup is created
	// from a cache that may not show this process's own writes yet.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// MaxConcurrentReconciles defaults to DefaultWorkers.
	MaxConcurrentReconciles int
	// MinInterval refuses schedules whose slots come closer than it (0: none is refused); the
	// operator's --min-schedule-interval, DefaultMinInterval unless set.
	MinInterval time.Duration
	// SkipImmediatelyDefault is what an unset spec.skipImmediately means: the operator's
	// --schedule-skip-immediately.
	SkipImmediatelyDefault bool
	// Queue is the controller's priority queue, through which the reconciler puts a schedule
	// back at the priority of its next look (see queue.go). SetupWithManager sets it when the
	// controller starts, before any reconcile. A reconciler without one (driven directly) returns
	// RequeueAfter instead, and records a slot in status in the reconcile that creates its Backup.
	Queue priorityqueue.PriorityQueue[reconcile.Request]

	// cacheIndexed says Client is the manager's cache with the Backup index of SetupWithManager.
	cacheIndexed bool
	// expect tracks this process's writes the cache may not show yet.
	expect expectations
	// timers put schedules back in Queue when their next look is due.
	timers timers
}

// SetupWithManager registers the reconciler under the name "scheduledbackup", with a priority
// queue (see queue.go). A ScheduledBackup is looked at when it appears or its spec changes, when
// its Cluster appears, when its next slot (or retry) is due, and, at the lowest priority, when one
// of its child Backups (found by label, whatever the owner-reference mode) finishes, goes away or
// is relabelled.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts ...func(*controller.Options)) error {
	if err := r.index(mgr); err != nil {
		return err
	}
	options := controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles, UsePriorityQueue: ptr.To(true)}
	if options.MaxConcurrentReconciles == 0 {
		options.MaxConcurrentReconciles = DefaultWorkers
	}
	for _, o := range opts {
		o(&options)
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("scheduledbackup").
		Watches(&v1.ScheduledBackup{}, selfAtDuePriority(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1.Backup{}, atPriority(priorityRecord, backupToSchedule), builder.WithPredicates(childSettled())).
		Watches(&v1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToSchedules),
			builder.WithPredicates(creations())).
		WatchesRawSource(source.Func(r.takeQueue)).
		WithOptions(options).
		Complete(r)
	if err != nil {
		return fmt.Errorf("building the ScheduledBackup controller: %w", err)
	}
	return nil
}

// Reconcile gathers the ScheduledBackup with its children and Cluster, decides once what it
// does now, and does it: create the slot's Backup, record the schedule's status, prune history,
// and put the schedule back for its next look.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o, err := r.gather(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if o.Schedule == nil {
		r.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	exportSchedule(o.Schedule)
	return r.act(ctx, o, Decide(o))
}
