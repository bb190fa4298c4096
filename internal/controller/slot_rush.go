package controller

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// DefaultHoldLimit is the HoldLimit of a reconciler that sets none.
const DefaultHoldLimit = 5 * time.Second

// wakeBuffer is how many wake-ups of a kind wait for the controller to take them; beyond it a held
// object waits for its hold limit instead.
const wakeBuffer = 4096

// SlotRush orders this process's writes when many schedules share a slot: the Backups due come
// first. One SlotRush is shared by the ScheduledBackup and Backup controllers of a process. It knows, for every ScheduledBackup this process reconciled, the time its next Backup is
// due to be created (none while it waits for a running Backup, a missing Cluster, or is suspended).
// While any of those times has passed and its reconcile has not created the Backup yet, the
// writes that can wait are held: a schedule's status, pruning and Events, and the Backup
// controller's first steps on a Backup not started yet. A held reconcile ends; its object is woken
// once the last due Backup is created, or when the hold limit since it was first held has passed,
// whichever comes first. Holding only reorders writes; what is written is decided again when the
// object is reconciled after the hold. The zero value is ready to use.
type SlotRush struct {
	mu sync.Mutex
	// due is each schedule's next create time; at counts the schedules per time (in Unix
	// nanoseconds), so the check for a time that has passed looks at a handful of distinct
	// times, not at every schedule.
	due map[types.NamespacedName]time.Time
	at  map[int64]int
	// held are the objects waiting for the end of the rush; since keeps the time each was first
	// held until it writes.
	held  map[heldObject]bool
	since map[heldObject]time.Time
	// wake receives the held objects of each kind when the rush ends; a kind nothing listens for
	// has none.
	wake map[heldKind]chan event.GenericEvent
}

// heldKind says which controller holds an object.
type heldKind int

const (
	heldSchedule heldKind = iota
	heldBackup
)

type heldObject struct {
	kind heldKind
	key  types.NamespacedName
}

// object is the object a wake-up names.
func (h heldObject) object() client.Object {
	meta := metav1.ObjectMeta{Namespace: h.key.Namespace, Name: h.key.Name}
	if h.kind == heldBackup {
		return &v1.Backup{ObjectMeta: meta}
	}
	return &v1.ScheduledBackup{ObjectMeta: meta}
}

func (r *SlotRush) init() {
	if r.due == nil {
		r.due, r.at = map[types.NamespacedName]time.Time{}, map[int64]int{}
		r.held, r.since = map[heldObject]bool{}, map[heldObject]time.Time{}
		r.wake = map[heldKind]chan event.GenericEvent{}
	}
}

// expect records when key's next Backup is due to be created; a zero time says none is expected.
// It wakes the held schedules if that ends the rush.
func (r *SlotRush) expect(key types.NamespacedName, next, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	if old, ok := r.due[key]; ok {
		r.uncount(old)
		delete(r.due, key)
	}
	if !next.IsZero() {
		r.due[key] = next
		r.at[next.UnixNano()]++
	}
	r.releaseIfIdle(now)
}

// forget drops a schedule that is gone.
func (r *SlotRush) forget(key types.NamespacedName, now time.Time) {
	r.expect(key, time.Time{}, now)
	r.wrote(heldObject{heldSchedule, key})
}

func (r *SlotRush) uncount(t time.Time) {
	n := t.UnixNano()
	if r.at[n] <= 1 {
		delete(r.at, n)
	} else {
		r.at[n]--
	}
}

// hold says whether h's writes wait, and for how long at most: while a schedule's Backup is due
// and not created, for at most limit since h was first held. An object held for a rush may go on
// waiting after it ends, within the same limit, while the caller has a reason of its own
// (ownWait); only a rush's end wakes it. An object let through is no longer remembered as held.
func (r *SlotRush) hold(h heldObject, now time.Time, limit time.Duration, ownWait bool) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	_, heldBefore := r.since[h]
	if busy := r.busy(now); busy || (ownWait && heldBefore) {
		first, ok := r.since[h]
		if !ok {
			first = now
			r.since[h] = now
		}
		if left := first.Add(limit).Sub(now); left > 0 {
			if busy {
				r.held[h] = true
			}
			return left, true
		}
	}
	delete(r.held, h)
	delete(r.since, h)
	return 0, false
}

// wrote says h's held writes are done: a later hold counts its limit afresh.
func (r *SlotRush) wrote(h heldObject) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	delete(r.held, h)
	delete(r.since, h)
}

// busy says a schedule's Backup is due at or before now and not created yet.
func (r *SlotRush) busy(now time.Time) bool {
	for t := range r.at {
		if t <= now.UnixNano() {
			return true
		}
	}
	return false
}

// releaseIfIdle wakes every held object once no Backup is due any more. A wake-up that does not
// fit in the buffer is dropped: that object goes on at its hold limit.
func (r *SlotRush) releaseIfIdle(now time.Time) {
	if len(r.held) == 0 || r.busy(now) {
		return
	}
	for h := range r.held {
		if ch := r.wake[h.kind]; ch != nil {
			select {
			case ch <- event.GenericEvent{Object: h.object()}:
			default:
			}
		}
		delete(r.held, h)
	}
}

// wakeChannel is where the held objects of a kind are sent when the rush ends.
func (r *SlotRush) wakeChannel(kind heldKind) <-chan event.GenericEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	if r.wake[kind] == nil {
		r.wake[kind] = make(chan event.GenericEvent, wakeBuffer)
	}
	return r.wake[kind]
}
