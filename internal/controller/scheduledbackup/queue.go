package scheduledbackup

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The priorities of the looks at a schedule in the controller's priority queue. At a slot many
// schedules share, every one of them comes due at once: the looks of the schedules whose slot (or
// retry) is due go first, so their Backups are created before anything else this controller
// writes, and with them a schedule that appears (or is listed when the operator starts) or whose
// spec changes; a new Cluster comes next (the queue's default priority); the looks that only
// record what happened (a child Backup's end, the slot of a Backup just created) go last, and a
// schedule whose record look waits is looked at by its next due look at the latest, the queue
// merging the two. The queue keeps the highest priority an item was added with and hands out the items of
// equal priority in the order they became ready.
const (
	priorityDue    = 100
	priorityRecord = handler.LowPriority
)

// recordDelay is how long the look that records the slot of a Backup just created waits for
// that Backup's end, which wakes it at once: a Backup that fails at once (its Cluster has no
// object store, say) is then recorded with its slot in one status write, and the watch has shown
// the Backup to the cache by then, so the look needs no fresh read.
const recordDelay = 5 * time.Second

// takeQueue is the controller's source that only hands the reconciler the controller's queue:
// the controller starts its sources before its workers.
func (r *Reconciler) takeQueue(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		return errors.New("the ScheduledBackup controller needs a priority queue")
	}
	r.Queue = pq
	return nil
}

// lookAgainAfter puts the schedule back for its next look after d (none when d is zero), at the
// priority of a due look. Without a queue it is the RequeueAfter of the result.
func (r *Reconciler) lookAgainAfter(key types.NamespacedName, d time.Duration) ctrl.Result {
	if r.Queue == nil {
		return ctrl.Result{RequeueAfter: d}
	}
	r.timers.set(key, d, func() {
		r.Queue.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(priorityDue)}, reconcile.Request{NamespacedName: key})
	})
	return ctrl.Result{}
}

// recordLater puts the schedule back at the priority of a look that records, after recordDelay
// unless its child's end (or a change of its spec) wakes it sooner: the queue merges the two into
// one item, ready at the earlier time. False without a queue.
func (r *Reconciler) recordLater(key types.NamespacedName) bool {
	if r.Queue == nil {
		return false
	}
	r.Queue.AddWithOpts(priorityqueue.AddOpts{After: recordDelay, Priority: ptr.To(priorityRecord)},
		reconcile.Request{NamespacedName: key})
	return true
}

// timers are the pending due looks, one per schedule: a timer adds its schedule to the queue
// only when the look is due, so that until then a look at a lower priority (a child's end) does
// not take the due look's priority. The queue's own delayed add would merge the two into one item
// at the higher priority, ready at once.
type timers struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*time.Timer
}

// set replaces key's pending look by fire after d; none when d is zero.
func (t *timers) set(key types.NamespacedName, d time.Duration, fire func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.m[key]; old != nil {
		old.Stop()
		delete(t.m, key)
	}
	if d <= 0 {
		return
	}
	if t.m == nil {
		t.m = map[types.NamespacedName]*time.Timer{}
	}
	var timer *time.Timer
	timer = time.AfterFunc(d, func() {
		t.mu.Lock()
		if t.m[key] == timer {
			delete(t.m, key)
		}
		t.mu.Unlock()
		fire()
	})
	t.m[key] = timer
}

// stop drops key's pending look.
func (t *timers) stop(key types.NamespacedName) { t.set(key, 0, nil) }

// selfAtDuePriority enqueues a ScheduledBackup that appears (created, or listed when the
// operator starts) or whose spec changes at the priority of a due look: a schedule never looked
// at, or changed by a user, must not wait behind the record looks, nor, when the operator starts
// with many schedules at a busy slot, starve behind the due looks of those already looked at.
func selfAtDuePriority() handler.EventHandler {
	return atPriority(priorityDue, func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
	})
}

// atPriority enqueues what m maps an object to (on an update, the old and the new object) at
// priority.
func atPriority(priority int, m handler.MapFunc) handler.EventHandler {
	add := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		var reqs []reconcile.Request
		for _, o := range objs {
			reqs = append(reqs, m(ctx, o)...)
		}
		if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
			pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(priority)}, reqs...)
			return
		}
		for _, req := range reqs {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
	}
}
