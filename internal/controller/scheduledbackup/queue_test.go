package scheduledbackup

import (
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestNextLookGoesThroughTheQueueAtTheDuePriority: with a queue, the next look is no
// RequeueAfter but the schedule added to the queue, at the priority of a due look, once the
// delay has passed; without one, it is the RequeueAfter of the result.
func TestNextLookGoesThroughTheQueueAtTheDuePriority(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "nightly"}
	if res := (&Reconciler{}).lookAgainAfter(key, time.Minute); res.RequeueAfter != time.Minute {
		t.Fatalf("without a queue: %+v, want RequeueAfter 1m", res)
	}
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	r := &Reconciler{Queue: q}
	if res := r.lookAgainAfter(key, 50*time.Millisecond); !res.IsZero() {
		t.Fatalf("with a queue: %+v, want no requeue of the result", res)
	}
	if q.Len() != 0 {
		t.Fatal("queued before the look is due")
	}
	check.Eventually(t, 10*time.Second, "the look is queued when due", check.True(func() bool { return q.Len() == 1 }))
	item, priority, _ := q.GetWithPriority()
	if item.NamespacedName != key || priority != priorityDue {
		t.Fatalf("queued %v at %d, want %v at %d", item, priority, key, priorityDue)
	}
	q.Done(item)
	if !r.recordLater(key) {
		t.Fatal("recordLater with a queue reports no queue")
	}
	if q.Len() != 0 {
		t.Fatal("the record look is ready before its delay or the Backup's end")
	}
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(priorityRecord)}, item) // the Backup's end, as the watch adds it
	if item, priority, _ = q.GetWithPriority(); item.NamespacedName != key || priority != priorityRecord {
		t.Fatalf("queued %v at %d, want %v at %d", item, priority, key, priorityRecord)
	}
	q.Done(item)
}

// TestTimersKeepOnlyTheLastLook: a schedule has one pending look, the one its last decision
// asked for; a zero delay or stop drops it.
func TestTimersKeepOnlyTheLastLook(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "nightly"}
	var first, second, dropped atomic.Int32
	var tm timers
	tm.set(key, 30*time.Millisecond, func() { first.Add(1) })
	tm.set(key, 60*time.Millisecond, func() { second.Add(1) })
	check.Eventually(t, 10*time.Second, "the last look fires", check.True(func() bool { return second.Load() == 1 }))
	if first.Load() != 0 {
		t.Fatal("a replaced look fired")
	}
	tm.set(key, 30*time.Millisecond, func() { dropped.Add(1) })
	tm.set(key, 0, nil)
	tm.set(types.NamespacedName{Namespace: "ns", Name: "other"}, 30*time.Millisecond, func() { dropped.Add(1) })
	tm.stop(types.NamespacedName{Namespace: "ns", Name: "other"})
	time.Sleep(100 * time.Millisecond)
	if dropped.Load() != 0 {
		t.Fatal("a dropped look fired")
	}
}
