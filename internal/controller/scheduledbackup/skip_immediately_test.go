package controller_test

import (
	"testing"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestSkipImmediatelyOnCreationSkipsTheImmediateBackupAndResetsTheFlag: created with immediate
// and skipImmediately, the schedule takes no Backup now, records lastSkipped, resets the flag,
// and runs the next slot normally.
func TestSkipImmediatelyOnCreationSkipsTheImmediateBackupAndResetsTheFlag(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) {
		s.Immediate, s.SkipImmediately = boolPtr(true), boolPtr(true)
	})
	h.reconcile("nightly")
	h.reconcile("nightly")
	h.wantBackups()
	sb := h.schedule("nightly")
	if sb.WantsSkipImmediately() || sb.Status.LastSkipped == nil {
		t.Fatalf("skipImmediately %v, lastSkipped %v: want consumed and recorded", *sb.Spec.SkipImmediately, sb.Status.LastSkipped)
	}
	if ev := h.events(); !hasEvent(ev, "SkippedImmediately") {
		t.Fatalf("events %v", ev)
	}
	slot := h.firstSlot("nightly")
	h.clock.SetTime(slot)
	h.reconcile("nightly")
	h.wantBackups(childName("nightly", slot))
}

// TestSkipImmediatelyOnUnsuspendSkipsTheDueSlot: a schedule unsuspended with skipImmediately
// while slots are due takes no Backup for them and resumes at the next slot.
func TestSkipImmediatelyOnUnsuspendSkipsTheDueSlot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) { s.Suspend = boolPtr(true) })
	h.reconcile("nightly")
	first := h.firstSlot("nightly")
	h.clock.SetTime(first.Add(2*time.Hour + 10*time.Minute))
	h.reconcile("nightly")
	h.updateSpec("nightly", func(s *v1.ScheduledBackupSpec) { s.Suspend, s.SkipImmediately = boolPtr(false), boolPtr(true) })
	h.reconcile("nightly")
	h.reconcile("nightly")
	h.wantBackups()
	sb := h.schedule("nightly")
	if sb.WantsSkipImmediately() || sb.Status.LastSkipped == nil || !sb.Status.NextScheduleTime.Time.Equal(first.Add(3*time.Hour)) {
		t.Fatalf("spec %+v status %+v: want the flag reset, lastSkipped set and the next slot after it", sb.Spec, sb.Status)
	}
	h.clock.SetTime(first.Add(3 * time.Hour))
	h.reconcile("nightly")
	h.wantBackups(childName("nightly", first.Add(3*time.Hour)))
	ev := h.events()
	for _, reason := range []string{"Suspended", "SkippedImmediately", "Resumed", "BackupCreated"} {
		if !hasEvent(ev, reason) {
			t.Fatalf("events %v lack %s", ev, reason)
		}
	}
}
