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

// DefaultHoldLimit is the Limit of a SlotRush that sets none: a few seconds of status and Events
// held back is nothing to a user, and creating a thousand schedules' Backups on a small API
// server takes about two.
const DefaultHoldLimit = 5 * time.Second

// wakeBuffer is how many wake-ups of a kind wait for the controller to take them; beyond it a held
// object waits for its hold limit instead.
const wakeBuffer = 4096

// SlotRush orders this process's writes when many schedules share a slot: the Backups due come
// first. One SlotRush is shared by the ScheduledBackup and Backup controllers of a process; the
// zero value is ready to use.
//
// It knows, for every ScheduledBackup this process reconciled, the time its next Backup is due to
// be created (none while it waits for a running Backup or a missing Cluster, or is suspended). A
// rush lasts while any of those times has passed, by less than the limit, and that schedule has
// not created its Backup yet. During a rush the writes that can wait are held: a schedule's status,
// pruning and Events, and the Backup controller's first steps on a Backup not started yet. A held
// reconcile ends; its object is woken when the last due Backup is created, or comes back when the
// limit since it was first held in this rush has passed, whichever is first. Once let through at
// the limit it is not held again in the same rush. Holding only reorders writes: what is written is
// decided again when the object is reconciled after the hold. A schedule whose reconcile failed
// is not due until it succeeds (it is retried with backoff, not at its slot), and a due time the
// limit has passed no longer counts, so a schedule whose create keeps failing cannot hold
// everything else.
type SlotRush struct {
	// Limit bounds every hold; zero means DefaultHoldLimit.
	Limit time.Duration

	mu sync.Mutex
	// due is each schedule's next create time; at counts the schedules per time (in Unix
	// nanoseconds), so the check for a rush looks at a handful of distinct times, not at every
	// schedule.
	due map[types.NamespacedName]time.Time
	at  map[int64]int
	// rush numbers the rushes: it moves on when a rush starts after none was seen, and when a
	// later due time comes (the next slot while the last one's work is still going on).
	// newestDue is the due time that numbered the current rush. latest is the
	// latest time a caller gave; a caller whose clock reading is older (read before it waited
	// for the lock) is taken to be at latest, so a rush cannot seem to end and start again.
	rush      int
	inRush    bool
	newestDue int64
	latest    time.Time
	// createdIn are the Backups the ScheduledBackup controller created during a rush, with the
	// rush's number, until the Backup controller has started them (or the limit has passed since
	// the rush's last create); toStart counts them by rush.
	createdIn map[types.NamespacedName]int
	toStart   map[int]*rushStarts
	// heldForStarts are the schedules held until the Backups of a rush are started.
	heldForStarts map[types.NamespacedName]bool
	held          map[heldObject]bool // to wake when the rush ends
	firstAt       map[heldObject]firstHold
	// wake receives the held objects of each kind when the rush ends; a kind nothing listens for
	// has none.
	wake map[heldKind]chan event.GenericEvent
}

// firstHold is when an object was first held, and in which rush.
type firstHold struct {
	rush int
	at   time.Time
}

// rushStarts counts a rush's Backups not started yet, and when the last of them was created.
type rushStarts struct {
	n    int
	last time.Time
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
		r.held, r.firstAt = map[heldObject]bool{}, map[heldObject]firstHold{}
		r.wake = map[heldKind]chan event.GenericEvent{}
		r.createdIn, r.toStart = map[types.NamespacedName]int{}, map[int]*rushStarts{}
		r.heldForStarts = map[types.NamespacedName]bool{}
	}
}

func (r *SlotRush) limit() time.Duration {
	if r.Limit > 0 {
		return r.Limit
	}
	return DefaultHoldLimit
}

// expect records when key's next Backup is due to be created; a zero time says none is expected.
// It wakes the held objects if that ends the rush.
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

// hold says whether h's writes wait, and for how long at most (never past until, the time the
// caller must look again anyway): during a rush, until the limit since h was first held in it; a
// Backup only until the limit since it was first held in any rush, so that no rush, however
// long, keeps a Backup from starting for more than the limit.
// A schedule held in a rush may go on waiting after the rush, within the same limit, while the
// Backups created in it are not all started (the Backup controller's work for them comes before
// the schedules' status writes), or while the caller has a reason of its own (ownWait). The end of
// a rush wakes the objects held for it; the start of its last Backup wakes the schedules held for
// that.
func (r *SlotRush) hold(h heldObject, now, until time.Time, ownWait bool) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	busy := r.busy(now)
	first, ok := r.firstAt[h]
	starting := h.kind == heldSchedule && r.starting(now)
	switch {
	case busy && (!ok || (h.kind == heldSchedule && first.rush != r.rush)):
		first = firstHold{rush: r.rush, at: now}
		r.firstAt[h] = first
	case !busy && !(ok && (ownWait || starting)):
		delete(r.firstAt, h)
		return 0, false
	}
	left := first.at.Add(r.limit()).Sub(now)
	if !until.IsZero() {
		left = min(left, until.Sub(now))
	}
	if left <= 0 {
		return 0, false
	}
	if busy {
		r.held[h] = true
	} else if starting {
		r.heldForStarts[h.key] = true
	}
	return left, true
}

// starting says Backups created in a rush are not all started yet, counting only those of a
// rush whose last create is more recent than the limit.
func (r *SlotRush) starting(now time.Time) bool {
	for _, st := range r.toStart {
		if st.n > 0 && now.Sub(st.last) < r.limit() {
			return true
		}
	}
	return false
}

// created records a Backup the ScheduledBackup controller just created. One created during a
// rush, when a Backup controller shares the rush, is counted until that controller starts it.
func (r *SlotRush) created(backup types.NamespacedName, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	if r.wake[heldBackup] == nil || !r.busy(now) {
		return
	}
	if _, ok := r.createdIn[backup]; ok {
		return
	}
	r.createdIn[backup] = r.rush
	st := r.toStart[r.rush]
	if st == nil {
		st = &rushStarts{}
		r.toStart[r.rush] = st
	}
	st.n++
	st.last = now
}

// wrote says h's held writes are done, or h is gone: its next hold is a first one. For a Backup,
// it is started (or gone): when it was the last of its rush's Backups to start, the schedules held
// for them are woken.
func (r *SlotRush) wrote(h heldObject) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	delete(r.held, h)
	delete(r.firstAt, h)
	if h.kind == heldSchedule {
		delete(r.heldForStarts, h.key)
		return
	}
	n, ok := r.createdIn[h.key]
	if !ok {
		return
	}
	delete(r.createdIn, h.key)
	st := r.toStart[n]
	if st == nil {
		return
	}
	if st.n--; st.n > 0 {
		return
	}
	delete(r.toStart, n)
	for key := range r.heldForStarts {
		r.send(heldObject{heldSchedule, key})
		delete(r.heldForStarts, key)
	}
}

// busy says a rush is on at now: a schedule's Backup is due, by less than the limit, and not
// created yet. It numbers a rush that starts after none was seen.
func (r *SlotRush) busy(now time.Time) bool {
	if now.After(r.latest) {
		r.latest = now
	}
	now = r.latest
	from, to := now.Add(-r.limit()).UnixNano(), now.UnixNano()
	busy, newest := false, int64(0)
	for t := range r.at {
		if from < t && t <= to {
			busy, newest = true, max(newest, t)
		}
	}
	if busy && (!r.inRush || newest > r.newestDue) {
		r.rush++
		r.newestDue = newest
	}
	r.inRush = busy
	return busy
}

// releaseIfIdle wakes every object held for the rush once it is over.
func (r *SlotRush) releaseIfIdle(now time.Time) {
	if r.busy(now) || len(r.held) == 0 {
		return
	}
	for h := range r.held {
		r.send(h)
		delete(r.held, h)
	}
}

// send wakes h through its kind's channel, if anything listens. A wake-up that does not fit in the
// buffer is dropped: h comes back at its limit.
func (r *SlotRush) send(h heldObject) {
	if ch := r.wake[h.kind]; ch != nil {
		select {
		case ch <- event.GenericEvent{Object: h.object()}:
		default:
		}
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
