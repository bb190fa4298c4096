package scheduledbackup_test

import (
	"context"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/scheduledbackup"
)

// startManager runs the reconciler, with the fake clock, in a manager watching only the test's
// namespace until the test ends.
func (w *world) startManager() {
	w.T.Helper()
	w.StartManager(func(mgr ctrl.Manager) error {
		return (&scheduledbackup.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Recorder: mgr.GetEventRecorderFor("scheduledbackup-controller"), Clock: w.Clock}).SetupWithManager(mgr)
	})
}

// TestChildCompletionWakesTheScheduleInEveryOwnerMode runs the manager: each schedule creates
// its immediate Backup, the fake clock moves past a slot, and that slot waits on the running
// immediate Backup. Only the Backup watch (children found by label) can wake the schedule before
// its next timed requeue, minutes of real time away, so the slot's Backup appearing within
// seconds of the child completing proves it, in the self, cluster and none modes alike. The
// Events a user reads in `kubectl describe` are checked on the API server.
func TestChildCompletionWakesTheScheduleInEveryOwnerMode(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.createCluster("db")
	modes := map[string]v1.BackupOwnerReference{
		"wake-self": v1.BackupOwnerReferenceSelf, "wake-cluster": v1.BackupOwnerReferenceCluster, "wake-none": v1.BackupOwnerReferenceNone,
	}
	for name, mode := range modes {
		w.createSchedule(name, func(s *v1.ScheduledBackupSpec) {
			s.BackupOwnerReference, s.Immediate = mode, boolPtr(true)
		})
	}
	w.startManager()
	immediate := map[string]string{}
	w.Eventually("every schedule creates its immediate Backup and records it", func(ctx context.Context) (bool, error) {
		for name := range modes {
			sb := w.schedule(name)
			if sb.Status.LastScheduleTime == nil {
				return false, nil
			}
			immediate[name] = childName(name, sb.Status.LastScheduleTime.Time)
		}
		return true, nil
	})
	slot := slotAfter(t, w.Clock.Now()).Add(time.Hour)
	w.Clock.SetTime(slot.Add(time.Second))
	for name := range modes {
		w.setPhase(immediate[name], v1.BackupPhaseRunning)
	}
	for name := range modes {
		w.setPhase(immediate[name], v1.BackupPhaseCompleted)
		start := time.Now()
		w.Eventually(name+": the completed child wakes the schedule", w.Exists(childName(name, slot), &v1.Backup{}))
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("%s: the slot's Backup came %v after the child completed", name, took)
		}
	}
	for name := range modes {
		w.Eventually(name+": Events on the API server", func(ctx context.Context) (bool, error) {
			reasons := map[string]bool{}
			for _, e := range w.NamespaceEvents(name) {
				reasons[e.Reason] = true
			}
			return reasons["ImmediateBackupCreated"] && reasons["BackupCreated"], nil
		})
	}
}
