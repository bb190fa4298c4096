package main

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestTallyTimeline(t *testing.T) {
	cadence := 10 * time.Second
	t0 := time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)
	end := t0.Add(2 * cadence)
	// Seen times carry the local zone, as time.Now's do; the slots parsed from names are UTC.
	local := func(d time.Duration) time.Time {
		now := time.Now()
		return now.Add(t0.Add(d).Sub(now)).In(time.Local)
	}
	backup := func(slot time.Time) client.ObjectKey {
		return client.ObjectKey{Namespace: "ns", Name: "sb-" + slot.Format(slotLayout)}
	}
	seen := []creation{
		{key: backup(t0), seen: local(300 * time.Millisecond)},
		{key: backup(t0), seen: local(2500 * time.Millisecond)}, // the slot's last create
		{key: backup(t0.Add(cadence)), seen: local(cadence + 1200*time.Millisecond)},
		{key: backup(t0.Add(-cadence)), seen: local(-cadence + time.Second)},          // before the window
		{key: backup(t0.Add(cadence)), seen: local(2*cadence + 300*time.Millisecond)}, // slot 1's last create, past slot 2
	}
	writes := []write{
		{kind: kindBackupWrite, seen: local(2 * time.Second)},                  // before slot 0's last create
		{kind: kindBackupWrite, seen: local(3 * time.Second)},                  // after it
		{kind: kindScheduleWrite, seen: local(cadence + 500*time.Millisecond)}, // before slot 1's last create
		{kind: kindBackupDelete, seen: local(cadence + 9500*time.Millisecond)},
		{kind: kindBackupDelete, seen: local(2*cadence + 100*time.Millisecond)}, // after the window, before slot 1's last create
	}
	var r result
	r.tallyTimeline(seen, writes, t0, end, cadence)
	tl := r.timeline
	if tl.slots != 2 {
		t.Fatalf("slots %d, want 2", tl.slots)
	}
	wantCreates := map[int]float64{0: 1, 1: 1, 2: 1}
	for s, v := range tl.creates {
		if v != wantCreates[s] {
			t.Errorf("creates in second %d: %v, want %v", s, v, wantCreates[s])
		}
	}
	if got := tl.others[kindBackupWrite]; got[2] != 1 || got[3] != 1 {
		t.Errorf("Backup writes by second %v, want one in second 2 and one in second 3", got)
	}
	if got := tl.others[kindBackupDelete]; got[9] != 1 || got[0] != 0 {
		t.Errorf("Backup deletes by second %v, want one in second 9 and none from after the window", got)
	}
	if tl.creates[0] != 1 {
		t.Errorf("creates in second 0: %v, want the one of slot 0 only, not slot 1's past the window", tl.creates[0])
	}
	if got := tl.others[kindScheduleWrite]; got[0] != 1 {
		t.Errorf("schedule writes by second %v, want one in second 0", got)
	}
	want := [kinds]int{kindBackupWrite: 1, kindBackupDelete: 2, kindScheduleWrite: 1}
	if tl.duringCreates != want {
		t.Errorf("writes during creates %v, want %v", tl.duringCreates, want)
	}
}

func TestBackupEventKinds(t *testing.T) {
	b := func(uid string, deleting bool) *v1.Backup {
		bk := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b-" + uid, UID: types.UID(uid)}}
		if deleting {
			bk.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return bk
	}
	events := []watch.Event{
		{Type: watch.Added, Object: b("a", false)},
		{Type: watch.Modified, Object: b("a", false)}, // its failure: a write
		{Type: watch.Modified, Object: b("a", true)},  // deleted, held by a finalizer: a delete
		{Type: watch.Modified, Object: b("a", true)},  // another write while it is deleted
		{Type: watch.Deleted, Object: b("a", true)},   // its last finalizer removed: a write
		{Type: watch.Added, Object: b("c", false)},
		{Type: watch.Deleted, Object: b("c", false)}, // deleted with no finalizer: a delete
		{Type: watch.Bookmark, Object: b("", false)}, // nothing
	}
	for _, timeline := range []bool{true, false} {
		o := newObserver(nil, false, timeline)
		for _, ev := range events {
			o.backupEvent(ev)
		}
		created, writes := o.snapshot()
		var got [kinds]int
		for _, w := range writes {
			got[w.kind]++
		}
		want := [kinds]int{kindBackupWrite: 3, kindBackupDelete: 2}
		if !timeline {
			want = [kinds]int{} // without -timeline only the creations are kept
		}
		if len(created) != 2 || got != want {
			t.Errorf("timeline %v: %d creations and writes %v, want 2 and %v", timeline, len(created), got, want)
		}
		if len(o.deleting) != 0 {
			t.Errorf("timeline %v: still deleting %v after the Deleted events", timeline, o.deleting)
		}
	}
}
