package scheduledbackup_test

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
	w := newWorld(t)
	w.createCluster("db")
	w.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) {
		s.Immediate, s.SkipImmediately = boolPtr(true), boolPtr(true)
	})
	w.reconcile("nightly")
	w.reconcile("nightly")
	w.wantBackups()
	sb := w.schedule("nightly")
	if !resetToFalse(sb) || sb.Status.LastSkipped == nil {
		t.Fatalf("skipImmediately %v, lastSkipped %v: want consumed (false) and recorded", sb.Spec.SkipImmediately, sb.Status.LastSkipped)
	}
	if ev := w.Events(); !hasEvent(ev, "SkippedImmediately") {
		t.Fatalf("events %v", ev)
	}
	slot := w.firstSlot("nightly")
	w.Clock.SetTime(slot)
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", slot))
}

// TestSkipImmediatelyOnUnsuspendSkipsTheDueSlot: a schedule unsuspended with skipImmediately
// while slots are due takes no Backup for them and resumes at the next slot.
func TestSkipImmediatelyOnUnsuspendSkipsTheDueSlot(t *testing.T) {
	t.Parallel()
	w, first := newNightly(t, func(s *v1.ScheduledBackupSpec) { s.Suspend = boolPtr(true) })
	w.Clock.SetTime(first.Add(2*time.Hour + 10*time.Minute))
	w.reconcile("nightly")
	w.updateSpec("nightly", func(s *v1.ScheduledBackupSpec) { s.Suspend, s.SkipImmediately = boolPtr(false), boolPtr(true) })
	w.reconcile("nightly")
	w.reconcile("nightly")
	w.wantBackups()
	sb := w.schedule("nightly")
	if !resetToFalse(sb) || sb.Status.LastSkipped == nil || !sb.Status.NextScheduleTime.Time.Equal(first.Add(3*time.Hour)) {
		t.Fatalf("spec %+v status %+v: want the flag reset, lastSkipped set and the next slot after it", sb.Spec, sb.Status)
	}
	w.Clock.SetTime(first.Add(3 * time.Hour))
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", first.Add(3*time.Hour)))
	ev := w.Events()
	for _, reason := range []string{"Suspended", "SkippedImmediately", "Resumed", "BackupCreated"} {
		if !hasEvent(ev, reason) {
			t.Fatalf("events %v lack %s", ev, reason)
		}
	}
}

// TestUnsetSkipImmediatelyFollowsTheOperatorFlag: a schedule created without skipImmediately is
// stored without it (no schema default), and its first decision reads the operator's
// --schedule-skip-immediately: with true, the immediate Backup is skipped and the field is then
// set to false; with false, it runs and the field stays unset.
func TestUnsetSkipImmediatelyFollowsTheOperatorFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule    string
		flag    bool
		backups int
	}{
		{"the flag true skips the immediate Backup", true, 0},
		{"the flag false runs it", false, 1},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			w := newWorld(t)
			w.skipDefault = tc.flag
			w.createCluster("db")
			w.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) { s.Immediate = boolPtr(true) })
			if sb := w.schedule("nightly"); sb.Spec.SkipImmediately != nil {
				t.Fatalf("skipImmediately stored as %v, want unset", *sb.Spec.SkipImmediately)
			}
			w.reconcile("nightly")
			w.reconcile("nightly")
			sb := w.schedule("nightly")
			if n := len(w.backups()); n != tc.backups {
				t.Fatalf("%d Backups, want %d", n, tc.backups)
			}
			switch {
			case tc.flag && (!resetToFalse(sb) || sb.Status.LastSkipped == nil):
				t.Errorf("spec %v, lastSkipped %v: want consumed (false) and recorded", sb.Spec.SkipImmediately, sb.Status.LastSkipped)
			case !tc.flag && (sb.Spec.SkipImmediately != nil || sb.Status.LastSkipped != nil):
				t.Errorf("spec %v, lastSkipped %v: want untouched", sb.Spec.SkipImmediately, sb.Status.LastSkipped)
			}
		})
	}
}

// resetToFalse: the operator wrote spec.skipImmediately false (consumed), not merely left it unset.
func resetToFalse(sb *v1.ScheduledBackup) bool {
	return sb.Spec.SkipImmediately != nil && !*sb.Spec.SkipImmediately
}

// TestOperatorDefaultNeverSkipsARunOfAnExistingSchedule: a schedule that already ran, with
// skipImmediately unset, is not skipped when the operator's --schedule-skip-immediately becomes
// true: its due slot runs, and its spec is not touched.
func TestOperatorDefaultNeverSkipsARunOfAnExistingSchedule(t *testing.T) {
	t.Parallel()
	w, first := newNightly(t)
	w.Clock.SetTime(first)
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", first))
	w.setPhase(childName("nightly", first), v1.BackupPhaseCompleted) // the concurrency guard lets the next slot run
	w.skipDefault = true                                             // the operator restarted with the flag
	w.Clock.SetTime(first.Add(time.Hour))
	w.reconcile("nightly")
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", first), childName("nightly", first.Add(time.Hour)))
	if sb := w.schedule("nightly"); sb.Spec.SkipImmediately != nil || sb.Status.LastSkipped != nil {
		t.Errorf("spec %v, lastSkipped %v: want untouched", sb.Spec.SkipImmediately, sb.Status.LastSkipped)
	}
}
