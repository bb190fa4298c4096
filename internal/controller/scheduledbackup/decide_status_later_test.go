package controller

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func key(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }

func sched(k types.NamespacedName) heldObject { return heldObject{heldSchedule, k} }

// newRush is a rush with a 5 s limit whose schedule wake-ups can be drained with woken.
func newRush() *SlotRush {
	r := &SlotRush{Limit: 5 * time.Second}
	r.wakeChannel(heldSchedule)
	return r
}

// woken drains the names sent on a kind's wake channel.
func woken(r *SlotRush, kinds ...heldKind) []string {
	kind := heldSchedule
	if len(kinds) > 0 {
		kind = kinds[0]
	}
	var out []string
	for {
		select {
		case e := <-r.wake[kind]:
			out = append(out, e.Object.GetName())
		default:
			slices.Sort(out)
			return out
		}
	}
}

// holds is r.hold of a schedule without a time to look again and without a reason of its own.
func holds(r *SlotRush, name string, now time.Time) (time.Duration, bool) {
	return r.hold(sched(key(name)), now, time.Time{}, false)
}

// TestRushHoldsWhileABackupIsDueAndWakesWhenTheLastIsCreated walks one slot shared by three
// schedules through the rush: who is held, for how long, and who is woken when.
func TestRushHoldsWhileABackupIsDueAndWakesWhenTheLastIsCreated(t *testing.T) {
	r := newRush()
	slot, next := hour(1), hour(2)
	before := slot.Add(-time.Minute)
	for _, n := range []string{"a", "b", "c"} {
		r.expect(key(n), slot, before)
	}
	if _, held := holds(r, "x", before); held {
		t.Fatal("held before any Backup is due")
	}
	r.expect(key("a"), next, slot) // a creates its Backup at the slot; b and c are still due
	if wait, held := holds(r, "a", slot); !held || wait != 5*time.Second {
		t.Fatalf("a's status after its create: %v %v, want held for the limit", wait, held)
	}
	if wait, held := holds(r, "x", slot.Add(time.Second)); !held || wait != 5*time.Second {
		t.Fatalf("x, first held a second later: %v %v, want its own full limit", wait, held)
	}
	if wait, held := holds(r, "a", slot.Add(2*time.Second)); !held || wait != 3*time.Second {
		t.Fatalf("a held again 2 s later: %v %v, want the 3 s left", wait, held)
	}
	r.expect(key("b"), next, slot.Add(2*time.Second))
	if got := woken(r); len(got) != 0 {
		t.Fatalf("woken %v while c's Backup is due", got)
	}
	// c now waits for a running Backup instead (no create expected): the rush is over.
	r.expect(key("c"), time.Time{}, slot.Add(3*time.Second))
	if got := woken(r); !slices.Equal(got, []string{"a", "x"}) {
		t.Fatalf("woken %v, want the held a and x", got)
	}
	if _, held := holds(r, "a", slot.Add(3*time.Second)); held {
		t.Fatal("a held after the rush")
	}
}

// TestRushLimitIsABound: an object let through at its limit is not held again by the same due
// time (a second look in one reconcile, a retry after a conflict). A later due time (the next
// slot, while the last one's work goes on) holds a schedule's writes afresh, so that work never
// competes with the next slot's creates; but never a Backup past the limit since it was first held.
func TestRushLimitIsABound(t *testing.T) {
	r := newRush()
	slot := hour(1)
	r.expect(key("due1"), slot, slot.Add(-time.Minute))
	r.expect(key("due2"), slot.Add(10*time.Second), slot.Add(-time.Minute)) // the next slot
	if _, held := holds(r, "a", slot); !held {
		t.Fatal("a not held during the rush")
	}
	bk := heldObject{heldBackup, key("a-1")}
	if _, held := r.hold(bk, slot, time.Time{}, false); !held {
		t.Fatal("a Backup not held during the rush")
	}
	if _, held := holds(r, "a", slot.Add(5*time.Second)); held {
		t.Fatal("a held at its limit")
	}
	if _, held := holds(r, "a", slot.Add(5*time.Second)); held {
		t.Fatal("a, let through at its limit, held again by the same due time")
	}
	if wait, held := holds(r, "a", slot.Add(10*time.Second)); !held || wait != 5*time.Second {
		t.Fatalf("a at the next slot: %v %v, want a fresh limit", wait, held)
	}
	if _, held := r.hold(bk, slot.Add(10*time.Second), time.Time{}, false); held {
		t.Fatal("a Backup held again at the next slot, past its limit")
	}
	if wait, held := holds(r, "a", slot.Add(12*time.Second)); !held || wait != 3*time.Second {
		t.Fatalf("a 2 s into the next slot's rush: %v %v, want 3s left", wait, held)
	}
	r.wrote(sched(key("a")))
	if wait, held := holds(r, "a", slot.Add(12*time.Second)); !held || wait != 5*time.Second {
		t.Fatalf("a after it wrote: %v %v, want its next hold to be a first one", wait, held)
	}
}

// TestRushOverdueDueTimeNoLongerCounts: a schedule whose create keeps failing stays due, but
// once the limit has passed since its due time it no longer makes a rush, so it cannot hold every
// other write of the operator.
func TestRushOverdueDueTimeNoLongerCounts(t *testing.T) {
	r := newRush()
	slot := hour(1)
	r.expect(key("stuck"), slot, slot.Add(-time.Minute))
	if _, held := holds(r, "a", slot.Add(4*time.Second)); !held {
		t.Fatal("a not held while stuck's Backup is due")
	}
	if _, held := holds(r, "b", slot.Add(5*time.Second)); held {
		t.Fatal("b held by a due time the limit has passed")
	}
	if r.busy(slot.Add(time.Hour)) {
		t.Fatal("an hour-old due time still makes a rush")
	}
}

// TestRushNeverHoldsPastTheTimeToLookAgain: a hold never outlasts the time the caller must be
// reconciled anyway (its own next slot), so a held schedule cannot sleep through its own slot.
func TestRushNeverHoldsPastTheTimeToLookAgain(t *testing.T) {
	r := newRush()
	slot := hour(1)
	r.expect(key("due"), slot, slot.Add(-time.Minute))
	if wait, held := r.hold(sched(key("a")), slot, slot.Add(2*time.Second), false); !held || wait != 2*time.Second {
		t.Fatalf("a whose next slot is 2 s away: %v %v, want held 2s", wait, held)
	}
	if _, held := r.hold(sched(key("a")), slot.Add(2*time.Second), slot.Add(2*time.Second), false); held {
		t.Fatal("a held at its own next slot")
	}
}

// TestRushForgetEndsTheRushADeletedScheduleHeldUp.
func TestRushForgetEndsTheRushADeletedScheduleHeldUp(t *testing.T) {
	r := newRush()
	slot := hour(1)
	r.expect(key("gone"), slot, slot.Add(-time.Minute))
	if _, held := holds(r, "a", slot); !held {
		t.Fatal("a not held")
	}
	r.forget(key("gone"), slot.Add(time.Second))
	if got := woken(r); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("woken %v after the due schedule was deleted, want a", got)
	}
}

// TestRushWakeNeverBlocks: more held schedules than the wake buffer holds, and no reader: the
// wake-ups that do not fit are dropped (those schedules come back at their limit); nothing blocks.
func TestRushWakeNeverBlocks(t *testing.T) {
	r := newRush()
	slot := hour(1)
	r.expect(key("due"), slot, slot.Add(-time.Minute))
	for i := range wakeBuffer + 10 {
		holds(r, fmt.Sprintf("s%d", i), slot)
	}
	done := make(chan struct{})
	go func() { r.expect(key("due"), hour(2), slot.Add(time.Second)); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("waking the held schedules blocked")
	}
	if got := len(r.wake[heldSchedule]); got != wakeBuffer {
		t.Fatalf("%d wake-ups buffered, want %d", got, wakeBuffer)
	}
}

// TestRushOwnWaitOnlyAfterAHold: a reason of the caller's own keeps an object waiting only if a
// rush held it first, and only within the limit counted from that first hold; the end of a rush
// does not wake an object that waits for its own reason only.
func TestRushOwnWaitOnlyAfterAHold(t *testing.T) {
	r := newRush()
	slot := hour(1)
	if _, held := r.hold(sched(key("lone")), slot, time.Time{}, true); held {
		t.Fatal("an object never held for a rush waits for its own reason")
	}
	r.expect(key("due"), slot, slot.Add(-time.Minute))
	if _, held := holds(r, "a", slot); !held {
		t.Fatal("a not held during the rush")
	}
	r.expect(key("due"), hour(2), slot.Add(time.Second))
	if got := woken(r); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("woken %v at the end of the rush, want a", got)
	}
	if wait, held := r.hold(sched(key("a")), slot.Add(2*time.Second), time.Time{}, true); !held || wait != 3*time.Second {
		t.Fatalf("a after the rush, waiting for its own reason: %v %v, want held 3s more", wait, held)
	}
	r.expect(key("other"), hour(3), slot.Add(3*time.Second))
	if got := woken(r); len(got) != 0 {
		t.Fatalf("woken %v: a waits for its own reason, not for a rush", got)
	}
	if _, held := r.hold(sched(key("a")), slot.Add(5*time.Second), time.Time{}, true); held {
		t.Fatal("a still held at its limit")
	}
}

// TestRushSchedulesWaitForTheRushsBackupsToStart: after a rush, a schedule held in it waits
// (within its limit) until the Backups created in the rush are started, and is woken when the last
// one is; a schedule never held does not wait; without a Backup controller sharing the rush,
// nothing is counted.
func TestRushSchedulesWaitForTheRushsBackupsToStart(t *testing.T) {
	slot := hour(1)
	rush := newRush()
	rush.wakeChannel(heldBackup)
	rush.expect(key("a"), slot, slot.Add(-time.Minute))
	rush.expect(key("b"), slot, slot.Add(-time.Minute))
	rush.created(key("a-1"), slot)
	rush.expect(key("a"), hour(2), slot)
	if _, held := holds(rush, "a", slot); !held {
		t.Fatal("a not held during the rush")
	}
	rush.created(key("b-1"), slot.Add(time.Second))
	rush.expect(key("b"), hour(2), slot.Add(time.Second))
	if got := woken(rush); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("woken %v at the end of the rush, want a", got)
	}
	if wait, held := holds(rush, "a", slot.Add(2*time.Second)); !held || wait != 3*time.Second {
		t.Fatalf("a while the rush's Backups are not started: %v %v, want held 3s more", wait, held)
	}
	if _, held := holds(rush, "b", slot.Add(2*time.Second)); held {
		t.Fatal("b, never held, waits for the Backups to start")
	}
	rush.wrote(heldObject{heldBackup, key("a-1")})
	if got := woken(rush); len(got) != 0 {
		t.Fatalf("woken %v with b-1 not started", got)
	}
	rush.wrote(heldObject{heldBackup, key("b-1")})
	if got := woken(rush); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("woken %v when the last Backup started, want a", got)
	}
	if _, held := holds(rush, "a", slot.Add(3*time.Second)); held {
		t.Fatal("a held once the Backups started")
	}

	alone := newRush() // no Backup controller: nothing is counted
	alone.expect(key("a"), slot, slot.Add(-time.Minute))
	alone.expect(key("b"), slot, slot.Add(-time.Minute))
	alone.created(key("a-1"), slot)
	alone.expect(key("a"), hour(2), slot)
	holds(alone, "a", slot)
	alone.created(key("b-1"), slot)
	alone.expect(key("b"), hour(2), slot)
	if _, held := holds(alone, "a", slot.Add(time.Second)); held {
		t.Fatal("held for Backups to start with no Backup controller sharing the rush")
	}
}

// TestDecideCountsAnUnrecordedSlotWhoseBackupIsGone: this process created a slot's Backup and,
// its status write held, the Backup was deleted. The slot counts as run: it is recorded, not
// created again, and not reported as an adoption.
func TestDecideCountsAnUnrecordedSlotWhoseBackupIsGone(t *testing.T) {
	sb := testSchedule()
	scheduledAt(hour(0))(sb)
	d := decideScheduledBackup(sbObservation{Now: hour(1).Add(3 * time.Second), Schedule: sb, Fresh: true,
		Cluster: &v1.Cluster{}, Unrecorded: map[string]time.Time{"nightly-20260501010000": hour(1)}})
	if d.Create != nil {
		t.Fatalf("the slot is created again: %s", d.Create.Name)
	}
	if got := d.Status.LastScheduleTime; got == nil || !got.Time.Equal(hour(1)) {
		t.Fatalf("lastScheduleTime %v, want %v", got, hour(1))
	}
	for _, e := range d.Events {
		if e.Kind.Reason == evBackupAdopted.Reason {
			t.Fatalf("events %v", d.Events)
		}
	}
}

// TestDecideNextCreate: the time a decision expects its schedule's next Backup, which the rush
// counts as due once it passes; none while the schedule waits for something else or runs nothing.
func TestDecideNextCreate(t *testing.T) {
	at := hour(1).Add(time.Second)
	running := testChild("nightly-20260501000000", v1.BackupPhaseRunning)
	cases := []struct {
		rule     string
		mutate   func(*v1.ScheduledBackup)
		children []v1.Backup
		noClust  bool
		want     time.Time
	}{
		{rule: "a slot is created: the next slot", mutate: scheduledAt(hour(0)), want: hour(2)},
		{rule: "idle: the next slot", mutate: scheduledAt(hour(1)), want: hour(2)},
		{rule: "waits for a running Backup: none", mutate: scheduledAt(hour(0)), children: []v1.Backup{running}},
		{rule: "waits for its Cluster: none", mutate: scheduledAt(hour(0)), noClust: true},
		{rule: "suspended: none", mutate: func(sb *v1.ScheduledBackup) { sb.Spec.Suspend = new(bool); *sb.Spec.Suspend = true }},
		{rule: "invalid schedule: none", mutate: func(sb *v1.ScheduledBackup) { sb.Spec.Schedule = "nonsense" }},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			sb := testSchedule()
			c.mutate(sb)
			o := sbObservation{Now: at, Schedule: sb, Children: c.children, Fresh: true, Cluster: &v1.Cluster{}}
			if c.noClust {
				o.Cluster = nil
			}
			if got := decideScheduledBackup(o).nextCreate(at); !got.Equal(c.want) {
				t.Fatalf("nextCreate %v, want %v", got, c.want)
			}
		})
	}
}
