package controller_test

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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller"
)

// rushHarness is one reconciler, kept across reconciles as in a running operator, over a client
// that counts the status writes of each ScheduledBackup.
type rushHarness struct {
	*harness
	r      *controller.ScheduledBackupReconciler
	mu     sync.Mutex
	writes map[string]int
}

func newRushHarness(t *testing.T, schedules ...string) *rushHarness {
	t.Helper()
	rh := &rushHarness{harness: newHarness(t), writes: map[string]int{}}
	rh.createCluster("db")
	for _, name := range schedules {
		rh.createSchedule(name)
	}
	c := rh.intercepting(interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*v1.ScheduledBackup); ok && sub == "status" {
				rh.mu.Lock()
				rh.writes[obj.GetName()]++
				rh.mu.Unlock()
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	rh.r = &controller.ScheduledBackupReconciler{Client: c, APIReader: c, Recorder: rh.recorder, Clock: rh.clock,
		Rush: &controller.SlotRush{}}
	for _, name := range schedules {
		rh.run(name) // each schedule is known, waiting for its first slot
	}
	rh.events()
	clear(rh.writes)
	return rh
}

func (rh *rushHarness) run(name string) time.Duration {
	rh.t.Helper()
	res, err := rh.r.Reconcile(rh.ctx, requestFor(rh.harness, name))
	if err != nil {
		rh.t.Fatalf("reconcile %s: %v", name, err)
	}
	return res.RequeueAfter
}

func (rh *rushHarness) statusWrites(name string) int {
	rh.mu.Lock()
	defer rh.mu.Unlock()
	return rh.writes[name]
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

// TestSharedSlotCreatesGoFirstThenOneStatusWrite: two schedules share a slot. The first creates
// its Backup and writes nothing else while the second's Backup is due and not created: no status,
// no Event, not even when its Backup fails meanwhile. Once the second creates its own, the first
// records its slot and the failure in one status write, with the create's Event, and recording its
// own Backup is no adoption.
func TestSharedSlotCreatesGoFirstThenOneStatusWrite(t *testing.T) {
	t.Parallel()
	rh := newRushHarness(t, "a", "b")
	slot := rh.firstSlot("a")
	if s := rh.firstSlot("b"); !s.Equal(slot) {
		t.Fatalf("the schedules' first slots differ: %v, %v", slot, s)
	}
	rh.clock.SetTime(slot)
	if wait := rh.run("a"); wait != controller.DefaultHoldLimit {
		t.Fatalf("a at the slot: requeue after %v, want the hold limit %v", wait, controller.DefaultHoldLimit)
	}
	a := childName("a", slot)
	rh.wantBackups(a)
	if n := rh.statusWrites("a"); n != 0 {
		t.Fatalf("a wrote its status %d time(s) while b's Backup was due", n)
	}
	if ev := rh.events(); len(ev) != 0 {
		t.Fatalf("Events %v while b's Backup was due", ev)
	}

	rh.setPhase(a, v1.BackupPhaseFailed)
	rh.clock.Step(200 * time.Millisecond)
	if wait := rh.run("a"); wait != controller.DefaultHoldLimit-200*time.Millisecond {
		t.Fatalf("a after its Backup failed: requeue after %v, want the rest of its hold", wait)
	}
	if n := rh.statusWrites("a"); n != 0 {
		t.Fatalf("a wrote its status %d time(s) while b's Backup was due", n)
	}

	rh.run("b")
	rh.wantBackups(a, childName("b", slot))
	if n := rh.statusWrites("b"); n != 1 {
		t.Fatalf("b, the last to create, wrote its status %d time(s), want 1 at once", n)
	}
	rh.run("a")
	sb := rh.schedule("a")
	if got := sb.Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("a's lastScheduleTime %v, want %v", got, slot)
	}
	if c := meta.FindStatusCondition(sb.Status.Conditions, v1.ConditionDegraded); c == nil || c.Reason != "BackupFailed" {
		t.Fatalf("a's Degraded %+v", c)
	}
	if n := rh.statusWrites("a"); n != 1 {
		t.Fatalf("a wrote its status %d times for the slot and the failure, want 1", n)
	}
	ev := mentioning(rh.events(), a)
	if len(ev) != 2 || !hasEvent(ev[:1], "BackupCreated") || !hasEvent(ev[1:], "BackupFailed") {
		t.Fatalf("Events naming %s: %v; want BackupCreated then BackupFailed, no adoption", a, ev)
	}
}

// TestHeldStatusWaitsForItsBackupsEndAfterTheRush: a schedule held at a shared slot goes on
// holding its status, once the rush is over, until its own Backup finishes (within the hold limit),
// so its slot and the Backup's end take one status write; a Backup that only starts running
// changes nothing. A schedule never held (the last to create) writes at once.
func TestHeldStatusWaitsForItsBackupsEndAfterTheRush(t *testing.T) {
	t.Parallel()
	rh := newRushHarness(t, "a", "b")
	slot := rh.firstSlot("a")
	rh.clock.SetTime(slot)
	rh.run("a")
	rh.run("b")
	if n := rh.statusWrites("b"); n != 1 {
		t.Fatalf("b, never held, wrote its status %d time(s), want 1 at once", n)
	}
	a := childName("a", slot)
	rh.clock.Step(time.Second)
	if wait := rh.run("a"); wait != controller.DefaultHoldLimit-time.Second {
		t.Fatalf("a after the rush, its Backup new: requeue after %v, want the rest of its hold", wait)
	}
	rh.setPhase(a, v1.BackupPhaseRunning)
	rh.clock.Step(time.Second)
	rh.run("a")
	if n := rh.statusWrites("a"); n != 0 || len(mentioning(rh.events(), a)) != 0 {
		t.Fatalf("a wrote %d status(es) or Events while its Backup runs, want none", n)
	}
	rh.setPhase(a, v1.BackupPhaseCompleted)
	rh.clock.Step(time.Second)
	rh.run("a")
	sb := rh.schedule("a")
	if got := sb.Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) || rh.statusWrites("a") != 1 {
		t.Fatalf("lastScheduleTime %v after %d status write(s); want %v in one", got, rh.statusWrites("a"), slot)
	}
	if ev := mentioning(rh.events(), a); !hasEvent(ev, "BackupCreated") || hasEvent(ev, "BackupAdopted") {
		t.Fatalf("Events %v: want BackupCreated, no adoption", ev)
	}
}

// TestHeldWritesGoOnAtTheHoldLimit: a schedule whose Backup is due is never reconciled (its
// reconciles fail, say); the other's writes wait for at most the hold limit, then go on.
func TestHeldWritesGoOnAtTheHoldLimit(t *testing.T) {
	t.Parallel()
	rh := newRushHarness(t, "a", "b")
	rh.r.Rush.Limit = 3 * time.Second
	slot := rh.firstSlot("a")
	rh.clock.SetTime(slot)
	if wait := rh.run("a"); wait != 3*time.Second {
		t.Fatalf("a at the slot: requeue after %v, want the hold limit", wait)
	}
	rh.clock.Step(2 * time.Second)
	if wait := rh.run("a"); wait != time.Second {
		t.Fatalf("a 2 s later: requeue after %v, want 1s", wait)
	}
	rh.clock.Step(time.Second)
	rh.run("a")
	if got := rh.schedule("a").Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("a's lastScheduleTime %v after the hold limit, want %v", got, slot)
	}
	if ev := mentioning(rh.events(), childName("a", slot)); !hasEvent(ev, "BackupCreated") {
		t.Fatalf("Events %v: want a's BackupCreated once its status is written", ev)
	}
}

// TestABackupDeletedWhileItsSlotIsHeldIsNotCreatedAgain: a's slot Backup is deleted while its
// status write is held; the slot still counts as run: it is recorded, and never created again.
func TestABackupDeletedWhileItsSlotIsHeldIsNotCreatedAgain(t *testing.T) {
	t.Parallel()
	rh := newRushHarness(t, "a", "b")
	slot := rh.firstSlot("a")
	rh.clock.SetTime(slot)
	rh.run("a")
	a := childName("a", slot)
	if err := rh.env.Client.Delete(rh.ctx, &v1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: rh.ns, Name: a}}); err != nil {
		t.Fatal(err)
	}
	rh.wantBackups()
	rh.clock.Step(time.Second)
	rh.run("a")
	rh.wantBackups()
	rh.run("b")
	rh.run("a")
	rh.wantBackups(childName("b", slot))
	if got := rh.schedule("a").Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("a's lastScheduleTime %v, want the deleted Backup's slot %v", got, slot)
	}
	rh.clock.Step(time.Minute)
	rh.run("a")
	rh.wantBackups(childName("b", slot))
	if ev := mentioning(rh.events(), a); !hasEvent(ev, "BackupCreated") || hasEvent(ev, "BackupAdopted") {
		t.Fatalf("Events naming %s: %v; want BackupCreated, no adoption", a, ev)
	}
}

// TestCreateEventFollowsAStatusWriteWhoseAnswerWasLost: the status patch recording a slot reaches
// the API server but its answer is lost; the next reconcile finds the slot recorded, writes
// nothing, and emits the create's Event then rather than with some later status write.
func TestCreateEventFollowsAStatusWriteWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("a")
	var lose atomic.Bool
	c := h.intercepting(interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			err := c.SubResource(sub).Patch(ctx, obj, p, opts...)
			if _, ok := obj.(*v1.ScheduledBackup); ok && err == nil && lose.CompareAndSwap(true, false) {
				return errors.New("connection reset: the answer was lost")
			}
			return err
		},
	})
	r := &controller.ScheduledBackupReconciler{Client: c, APIReader: c, Recorder: h.recorder, Clock: h.clock}
	if _, err := r.Reconcile(h.ctx, requestFor(h, "a")); err != nil {
		t.Fatal(err)
	}
	h.events()
	slot := h.firstSlot("a")
	h.clock.SetTime(slot)
	lose.Store(true)
	if _, err := r.Reconcile(h.ctx, requestFor(h, "a")); err == nil {
		t.Fatal("the lost answer was not reported")
	}
	if got := h.schedule("a").Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("lastScheduleTime %v, want %v written", got, slot)
	}
	if ev := h.events(); hasEvent(ev, "BackupCreated") {
		t.Fatalf("events %v before the write was confirmed", ev)
	}
	h.clock.Step(time.Second)
	if _, err := r.Reconcile(h.ctx, requestFor(h, "a")); err != nil {
		t.Fatal(err)
	}
	if ev := h.events(); !hasEvent(ev, "BackupCreated") || hasEvent(ev, "BackupAdopted") {
		t.Fatalf("events %v: want BackupCreated, no adoption", ev)
	}
}

// TestAScheduleWhoseCreateFailsHoldsNothing: b's create fails at the shared slot (its reconcile is
// retried with backoff); from then on b is not due, so a, held while b was due, writes as soon as
// its own Backup has finished rather than at its hold limit.
func TestAScheduleWhoseCreateFailsHoldsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("a")
	h.createSchedule("b")
	c := h.intercepting(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if strings.HasPrefix(obj.GetName(), "b-") {
				return errors.New("admission webhook denied the request")
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	r := &controller.ScheduledBackupReconciler{Client: c, APIReader: c, Recorder: h.recorder, Clock: h.clock}
	run := func(name string) (time.Duration, error) {
		res, err := r.Reconcile(h.ctx, requestFor(h, name))
		return res.RequeueAfter, err
	}
	for _, n := range []string{"a", "b"} {
		if _, err := run(n); err != nil {
			t.Fatal(err)
		}
	}
	slot := h.firstSlot("a")
	h.clock.SetTime(slot)
	if wait, err := run("a"); err != nil || wait == 0 {
		t.Fatalf("a at the slot: %v, %v; want held while b is due", wait, err)
	}
	if got := h.schedule("a").Status.LastScheduleTime; got != nil {
		t.Fatalf("a recorded its slot while b was due")
	}
	if _, err := run("b"); err == nil {
		t.Fatal("b's create did not fail")
	}
	h.setPhase(childName("a", slot), v1.BackupPhaseFailed) // a no longer waits for its own Backup
	h.clock.Step(time.Second)
	if wait, err := run("a"); err != nil {
		t.Fatal(err)
	} else if got := h.schedule("a").Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("a's lastScheduleTime %v (requeue after %v) once b's create failed, want %v", got, wait, slot)
	}
}
