package scheduledbackup_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/scheduledbackup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// queuedWorld is one reconciler with a real priority queue, kept across reconciles as in a
// running operator, over a client that counts the status writes of each ScheduledBackup.
type queuedWorld struct {
	*world
	r      *scheduledbackup.Reconciler
	mu     sync.Mutex
	writes map[string]int
}

func newQueuedWorld(t *testing.T, schedules ...string) *queuedWorld {
	t.Helper()
	return newQueuedWorldOf(t, func(*v1.ScheduledBackupSpec) {}, schedules...)
}

// newQueuedWorldOf is newQueuedWorld with every schedule's spec changed by mutate.
func newQueuedWorldOf(t *testing.T, mutate func(*v1.ScheduledBackupSpec), schedules ...string) *queuedWorld {
	t.Helper()
	qw := &queuedWorld{world: newWorld(t), writes: map[string]int{}}
	qw.createCluster("db")
	for _, name := range schedules {
		qw.createSchedule(name, mutate)
	}
	c := qw.intercepting(interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*v1.ScheduledBackup); ok && sub == "status" {
				qw.mu.Lock()
				qw.writes[obj.GetName()]++
				qw.mu.Unlock()
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	q := priorityqueue.New[reconcile.Request]("scheduledbackup-test")
	t.Cleanup(q.ShutDown)
	qw.r = &scheduledbackup.Reconciler{Client: c, APIReader: c, Recorder: qw.Recorder, Clock: qw.Clock, Queue: q}
	for _, name := range schedules {
		qw.run(name) // each schedule is known, waiting for its first slot
	}
	qw.Events()
	clear(qw.writes)
	return qw
}

func (qw *queuedWorld) run(name string) {
	qw.T.Helper()
	res, err := qw.r.Reconcile(qw.Ctx, qw.request(name))
	check.Must(qw.T, err)
	if !res.IsZero() {
		qw.T.Fatalf("reconcile %s with a queue: result %+v, want the next look through the queue", name, res)
	}
}

func (qw *queuedWorld) statusWrites(name string) int {
	qw.mu.Lock()
	defer qw.mu.Unlock()
	return qw.writes[name]
}

// wantQueuedAt takes the next ready item of the queue and fails unless it is name at priority.
func (qw *queuedWorld) wantQueuedAt(name string, priority int) {
	qw.T.Helper()
	if n := qw.r.Queue.Len(); n == 0 {
		qw.T.Fatalf("nothing is ready in the queue, want %s at priority %d", name, priority)
	}
	item, got, _ := qw.r.Queue.GetWithPriority()
	qw.r.Queue.Done(item)
	if item.Name != name || got != priority {
		qw.T.Fatalf("queued %s at priority %d, want %s at %d", item.Name, got, name, priority)
	}
}

// mentioning are the recorded Events whose message names s.
func mentioning(events []string, s string) []string {
	var out []string
	for _, e := range events {
		if strings.Contains(e, s) {
			out = append(out, e)
		}
	}
	return out
}

// TestSlotStatusWaitsForALookAtTheLowestPriority: at its slot, a schedule creates its Backup and
// writes nothing else, no status and no Event: it is put back at the lowest priority, behind the
// looks of the other schedules whose slot is due, woken by its Backup's end (the watch, which does
// not run here) or after a delay. When that look comes, after its Backup failed,
// it records the slot and the failure in one status write, with the create's Event, and
// recording its own Backup is no adoption.
func TestSlotStatusWaitsForALookAtTheLowestPriority(t *testing.T) {
	t.Parallel()
	qw := newQueuedWorld(t, "a")
	slot := qw.firstSlot("a")
	qw.Clock.SetTime(slot)
	qw.run("a")
	a := childName("a", slot)
	qw.wantBackups(a)
	if n := qw.statusWrites("a"); n != 0 {
		t.Fatalf("a wrote its status %d time(s) with its create", n)
	}
	if ev := qw.Events(); len(ev) != 0 {
		t.Fatalf("Events %v with the create", ev)
	}
	if n := qw.r.Queue.Len(); n != 0 {
		t.Fatalf("%d look(s) ready right after the create, want the record look to wait for the Backup's end", n)
	}
	qw.setPhase(a, v1.BackupPhaseFailed)
	check.Eventually(t, 30*time.Second, "the record look comes (the watch's wake-up is not running here: its delay)",
		check.True(func() bool { return qw.r.Queue.Len() > 0 }))
	qw.wantQueuedAt("a", handler.LowPriority)
	qw.Clock.Step(200 * time.Millisecond)
	qw.run("a")
	sb := qw.schedule("a")
	if got := sb.Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("a's lastScheduleTime %v, want %v", got, slot)
	}
	if c := meta.FindStatusCondition(sb.Status.Conditions, v1.ConditionDegraded); c == nil || c.Reason != "BackupFailed" {
		t.Fatalf("a's Degraded %+v", c)
	}
	if n := qw.statusWrites("a"); n != 1 {
		t.Fatalf("a wrote its status %d times for the slot and the failure, want 1", n)
	}
	ev := mentioning(qw.Events(), a)
	if len(ev) != 2 || !hasEvent(ev[:1], "BackupCreated") || !hasEvent(ev[1:], "BackupFailed") {
		t.Fatalf("Events naming %s: %v; want BackupCreated then BackupFailed, no adoption", a, ev)
	}
}

// TestASlotDueBeforeThePreviousOneIsRecordedOnlyCreates: a slot many schedules share ran late,
// and the look recording a's previous slot has not come when a's next slot is due; that slot's
// Backup has failed meanwhile, beyond the history limit. The due look creates the next Backup and
// writes nothing else: no status, no Event, no pruning, all left to the look at the lowest
// priority. That look records the slots and the failures in one status write, prunes, and emits
// every Event once, the failure of the previous Backup among them, which only the due look knew.
func TestASlotDueBeforeThePreviousOneIsRecordedOnlyCreates(t *testing.T) {
	t.Parallel()
	qw := newQueuedWorldOf(t, func(s *v1.ScheduledBackupSpec) {
		s.Schedule = "*/10 * * * * *"
		s.FailedBackupsHistoryLimit = new(int32)
	}, "a")
	slot1 := qw.firstSlot("a")
	qw.Clock.SetTime(slot1)
	qw.run("a")
	a1 := childName("a", slot1)
	qw.setPhase(a1, v1.BackupPhaseFailed)

	slot2 := slot1.Add(10 * time.Second)
	qw.Clock.SetTime(slot2)
	qw.run("a")
	a2 := childName("a", slot2)
	qw.wantBackups(a1, a2)
	if n := qw.statusWrites("a"); n != 0 {
		t.Fatalf("a wrote its status %d time(s) in the looks that created its Backups", n)
	}
	if ev := qw.Events(); len(ev) != 0 {
		t.Fatalf("Events %v in the looks that created the Backups", ev)
	}

	qw.setPhase(a2, v1.BackupPhaseFailed)
	qw.Clock.Step(2 * time.Second)
	qw.run("a")
	if n := qw.statusWrites("a"); n != 1 {
		t.Fatalf("a wrote its status %d times recording both slots, want 1", n)
	}
	if got := qw.schedule("a").Status.LastScheduleTime; got == nil || !got.Time.Equal(slot2) {
		t.Fatalf("a's lastScheduleTime %v, want %v", got, slot2)
	}
	check.Eventually(t, 30*time.Second, "the failed Backups beyond the limit of 0 are pruned",
		check.True(func() bool { return len(qw.backups()) == 0 }))
	ev := qw.Events()
	for _, want := range []struct{ reason, name string }{
		{"BackupCreated", a1}, {"BackupCreated", a2}, {"BackupFailed", a1}, {"BackupFailed", a2},
	} {
		if got := mentioning(mentioning(ev, want.reason), want.name); len(got) != 1 {
			t.Fatalf("%s Events naming %s: %v, want one; all Events: %v", want.reason, want.name, got, ev)
		}
	}
	if !hasEvent(ev, "BackupsPruned") {
		t.Fatalf("no BackupsPruned Event: %v", ev)
	}
}

// TestASchedulesNextSlotIsLookedAtWhenDueThoughItsRecordLookHasNotCome: a's slot Backup is
// created and its status left to the look at the lowest priority, which does not come (no worker
// takes it, no Backup ends) before a's next slot: a is then queued at a due look's priority, above
// the record looks, not at the record look's.
func TestASchedulesNextSlotIsLookedAtWhenDueThoughItsRecordLookHasNotCome(t *testing.T) {
	t.Parallel()
	qw := newQueuedWorldOf(t, func(s *v1.ScheduledBackupSpec) { s.Schedule = "*/10 * * * * *" }, "a")
	slot := qw.firstSlot("a")
	qw.Clock.SetTime(slot)
	qw.run("a")
	qw.wantBackups(childName("a", slot))
	time.Sleep(10 * time.Second) // the record look's delay (5 s) and the next slot (10 s) have passed
	// A record look taken before the due look's timer fired (a slow machine) is put back as it
	// was, for the timer to raise; after 30 s it still fails.
	deadline := time.Now().Add(20 * time.Second)
	item, priority, _ := qw.r.Queue.GetWithPriority()
	for item.Name == "a" && priority <= 0 && time.Now().Before(deadline) {
		qw.r.Queue.Done(item)
		qw.r.Queue.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(priority)}, item)
		time.Sleep(100 * time.Millisecond)
		item, priority, _ = qw.r.Queue.GetWithPriority()
	}
	qw.r.Queue.Done(item)
	if item.Name != "a" || priority <= 0 {
		t.Fatalf("queued %s at priority %d, want a above the default priority (0) and the record looks' (%d)",
			item.Name, priority, handler.LowPriority)
	}
	if n := qw.r.Queue.Len(); n != 0 {
		t.Fatalf("%d more look(s) queued, want the record look and the due look merged into one", n)
	}
}

// TestABackupDeletedBeforeItsSlotIsRecordedIsNotCreatedAgain: a's slot Backup is deleted before
// the look that records its slot; the slot still counts as run: it is recorded, and never created
// again.
func TestABackupDeletedBeforeItsSlotIsRecordedIsNotCreatedAgain(t *testing.T) {
	t.Parallel()
	qw := newQueuedWorld(t, "a")
	slot := qw.firstSlot("a")
	qw.Clock.SetTime(slot)
	qw.run("a")
	a := childName("a", slot)
	check.Must(t, qw.Client.Delete(qw.Ctx, &v1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: qw.NS, Name: a}}))
	qw.wantBackups()
	qw.Clock.Step(time.Second)
	qw.run("a")
	qw.wantBackups()
	if got := qw.schedule("a").Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("a's lastScheduleTime %v, want the deleted Backup's slot %v", got, slot)
	}
	qw.Clock.Step(time.Minute)
	qw.run("a")
	qw.wantBackups()
	if ev := mentioning(qw.Events(), a); !hasEvent(ev, "BackupCreated") || hasEvent(ev, "BackupAdopted") {
		t.Fatalf("Events naming %s: %v; want BackupCreated, no adoption", a, ev)
	}
}

// TestCreateEventFollowsAStatusWriteWhoseAnswerWasLost: the status patch recording a slot reaches
// the API server but its answer is lost; the next reconcile finds the slot recorded, writes
// nothing, and emits the create's Event then rather than with some later status write.
func TestCreateEventFollowsAStatusWriteWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.createCluster("db")
	w.createSchedule("a")
	var lose atomic.Bool
	c := w.intercepting(interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			err := c.SubResource(sub).Patch(ctx, obj, p, opts...)
			if _, ok := obj.(*v1.ScheduledBackup); ok && err == nil && lose.CompareAndSwap(true, false) {
				return errors.New("connection reset: the answer was lost")
			}
			return err
		},
	})
	r := &scheduledbackup.Reconciler{Client: c, APIReader: c, Recorder: w.Recorder, Clock: w.Clock}
	if _, err := r.Reconcile(w.Ctx, w.request("a")); err != nil {
		t.Fatal(err)
	}
	w.Events()
	slot := w.firstSlot("a")
	w.Clock.SetTime(slot)
	lose.Store(true)
	if _, err := r.Reconcile(w.Ctx, w.request("a")); err == nil {
		t.Fatal("the lost answer was not reported")
	}
	if got := w.schedule("a").Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("lastScheduleTime %v, want %v written", got, slot)
	}
	if ev := w.Events(); hasEvent(ev, "BackupCreated") {
		t.Fatalf("events %v before the write was confirmed", ev)
	}
	w.Clock.Step(time.Second)
	if _, err := r.Reconcile(w.Ctx, w.request("a")); err != nil {
		t.Fatal(err)
	}
	if ev := w.Events(); !hasEvent(ev, "BackupCreated") || hasEvent(ev, "BackupAdopted") {
		t.Fatalf("events %v: want BackupCreated, no adoption", ev)
	}
}
