package controller

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func key(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }

func sched(k types.NamespacedName) heldObject { return heldObject{heldSchedule, k} }

// woken drains the names sent on the rush's wake channel.
func woken(r *SlotRush) []string {
	var out []string
	for {
		select {
		case e := <-r.wake[heldSchedule]:
			out = append(out, e.Object.GetName())
		default:
			slices.Sort(out)
			return out
		}
	}
}

// TestRushHoldsWhileABackupIsDueAndWakesWhenTheLastIsCreated walks one slot shared by three
// schedules through the rush: who is held, for how long, and who is woken when.
func TestRushHoldsWhileABackupIsDueAndWakesWhenTheLastIsCreated(t *testing.T) {
	r := &SlotRush{}
	r.wakeChannel(heldSchedule)
	slot, next := hour(1), hour(2)
	before := slot.Add(-time.Minute)
	for _, n := range []string{"a", "b", "c"} {
		r.expect(key(n), slot, before)
	}
	if _, held := r.hold(sched(key("x")), before, time.Minute, false); held {
		t.Fatal("held before any Backup is due")
	}
	// a creates its Backup at the slot; b and c are still due.
	r.expect(key("a"), next, slot)
	if wait, held := r.hold(sched(key("a")), slot, 5*time.Second, false); !held || wait != 5*time.Second {
		t.Fatalf("a's status after its create: %v %v, want held for the limit", wait, held)
	}
	// A schedule outside the slot with something to write waits too, its own limit counted from
	// when it was first held.
	if wait, held := r.hold(sched(key("x")), slot.Add(time.Second), 5*time.Second, false); !held || wait != 5*time.Second {
		t.Fatalf("x: %v %v", wait, held)
	}
	if wait, held := r.hold(sched(key("a")), slot.Add(2*time.Second), 5*time.Second, false); !held || wait != 3*time.Second {
		t.Fatalf("a held again 2 s later: %v %v, want the 3 s left", wait, held)
	}
	// b creates; c is still due: nobody is woken.
	r.expect(key("b"), next, slot.Add(2*time.Second))
	if got := woken(r); len(got) != 0 {
		t.Fatalf("woken %v while c's Backup is due", got)
	}
	// c now waits for a running Backup instead (no create expected): the rush is over.
	r.expect(key("c"), time.Time{}, slot.Add(3*time.Second))
	if got := woken(r); !slices.Equal(got, []string{"a", "x"}) {
		t.Fatalf("woken %v, want the held a and x", got)
	}
	if _, held := r.hold(sched(key("a")), slot.Add(3*time.Second), 5*time.Second, false); held {
		t.Fatal("a held after the rush")
	}
	r.wrote(sched(key("a")))
	// At the next slot a's hold counts afresh.
	r.expect(key("b"), next, slot.Add(4*time.Second))
	if wait, held := r.hold(sched(key("a")), next, 5*time.Second, false); !held || wait != 5*time.Second {
		t.Fatalf("a at the next slot: %v %v, want a fresh limit", wait, held)
	}
}

// TestRushLimitAndForget: a due Backup that is never created holds the others only up to their
// limit; a schedule that is deleted ends the rush it was holding up.
func TestRushLimitAndForget(t *testing.T) {
	r := &SlotRush{}
	r.wakeChannel(heldSchedule)
	slot := hour(1)
	r.expect(key("stuck"), slot, slot.Add(-time.Minute))
	if _, held := r.hold(sched(key("a")), slot, 5*time.Second, false); !held {
		t.Fatal("a not held while stuck's Backup is due")
	}
	if _, held := r.hold(sched(key("a")), slot.Add(5*time.Second), 5*time.Second, false); held {
		t.Fatal("a still held at its limit")
	}
	if _, held := r.hold(sched(key("b")), slot.Add(5*time.Second), 5*time.Second, false); !held {
		t.Fatal("b, first held now, let through")
	}
	r.forget(key("stuck"), slot.Add(6*time.Second))
	if got := woken(r); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("woken %v after the stuck schedule was deleted, want b", got)
	}
	if r.busy(slot.Add(time.Hour)) {
		t.Fatal("busy with nothing expected")
	}
}

// TestRushWakeNeverBlocks: more held schedules than the wake buffer holds, and no reader: the
// wake-ups that do not fit are dropped (those schedules go on at their limit) and nothing blocks.
func TestRushWakeNeverBlocks(t *testing.T) {
	r := &SlotRush{}
	r.wakeChannel(heldSchedule)
	slot := hour(1)
	r.expect(key("due"), slot, slot.Add(-time.Minute))
	n := wakeBuffer + 10
	for i := range n {
		r.hold(sched(key(fmt.Sprintf("s%d", i))), slot, time.Minute, false)
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
		{rule: "suspended: none", mutate: func(sb *v1.ScheduledBackup) { sb.Spec.Suspend = ptr.To(true) }},
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

// TestRushOwnWaitOnlyAfterAHold: a reason of the caller's own keeps an object waiting only if the
// rush held it first, and only within the limit counted from that first hold; the end of the rush
// does not wake an object that waits for its own reason only.
func TestRushOwnWaitOnlyAfterAHold(t *testing.T) {
	r := &SlotRush{}
	r.wakeChannel(heldSchedule)
	slot := hour(1)
	if _, held := r.hold(sched(key("lone")), slot, 5*time.Second, true); held {
		t.Fatal("an object never held for a rush waits for its own reason")
	}
	r.expect(key("due"), slot, slot.Add(-time.Minute))
	if _, held := r.hold(sched(key("a")), slot, 5*time.Second, false); !held {
		t.Fatal("a not held during the rush")
	}
	r.expect(key("due"), hour(2), slot.Add(time.Second))
	if got := woken(r); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("woken %v at the end of the rush, want a", got)
	}
	if wait, held := r.hold(sched(key("a")), slot.Add(2*time.Second), 5*time.Second, true); !held || wait != 3*time.Second {
		t.Fatalf("a after the rush, waiting for its own reason: %v %v, want held 3s more", wait, held)
	}
	r.expect(key("other"), hour(3), slot.Add(3*time.Second))
	if got := woken(r); len(got) != 0 {
		t.Fatalf("woken %v: a waits for its own reason, not for a rush", got)
	}
	if _, held := r.hold(sched(key("a")), slot.Add(5*time.Second), 5*time.Second, true); held {
		t.Fatal("a still held at its limit")
	}
	if _, held := r.hold(sched(key("a")), slot.Add(6*time.Second), 5*time.Second, true); held {
		t.Fatal("a held for its own reason after it was let through")
	}
}
