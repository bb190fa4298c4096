package scheduledbackup

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func skipImmediately(sb *v1.ScheduledBackup) { sb.Spec.SkipImmediately = ptr.To(true) }

// unsuspended is a schedule that was suspended (and recorded so) and has just been resumed.
func unsuspended(sb *v1.ScheduledBackup) {
	sb.Generation = 3
	meta.SetStatusCondition(&sb.Status.Conditions, metav1.Condition{Type: v1.ConditionReady,
		Status: metav1.ConditionFalse, Reason: reasonSuspended, LastTransitionTime: metav1.NewTime(hour(1))})
}

// TestDecideSkipImmediatelyRules has one row per rule of the skipImmediately design.
func TestDecideSkipImmediatelyRules(t *testing.T) {
	wantSkipped := func(at, next time.Time) func(*testing.T, Decision) {
		return func(t *testing.T, d Decision) {
			t.Helper()
			if !d.ResetSkipImmediately {
				t.Fatal("spec.skipImmediately is not reset")
			}
			wantTime(t, "lastSkipped", d.Status.LastSkipped, at)
			wantTime(t, "nextScheduleTime", d.Status.NextScheduleTime, next)
		}
	}
	late := hour(5).Add(10 * time.Minute)
	runDecideCases(t, []decideCase{
		{rule: "on creation the immediate Backup is skipped, lastSkipped recorded and the flag reset",
			sb:  []func(*v1.ScheduledBackup){skipImmediately, set(func(s *v1.ScheduledBackupSpec) { s.Immediate = ptr.To(true) })},
			now: created.Add(time.Second), wantEvents: []string{"SkippedImmediately"},
			check: all(wantSkipped(created.Add(time.Second), hour(1)), contains("what", "immediate Backup is skipped"))},
		{rule: "on creation a slot already due is skipped and the cron restarts from lastSkipped",
			sb: []func(*v1.ScheduledBackup){skipImmediately}, now: hour(1).Add(5 * time.Minute),
			wantEvents: []string{"SkippedImmediately"},
			check:      all(wantSkipped(hour(1).Add(5*time.Minute), hour(2)), contains("what", "slot 2026-05-01T01:00:00Z is skipped"))},
		{rule: "on unsuspend with a slot already due that slot is skipped",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(1)), unsuspended, skipImmediately}, now: late,
			wantEvents: []string{"SkippedImmediately", "Resumed"},
			check:      all(wantSkipped(late, hour(6)), wantReady(metav1.ConditionTrue, reasonScheduled))},
		{rule: "on unsuspend without skipImmediately the most recent missed slot runs once",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(1)), unsuspended}, now: late,
			wantCreate: "nightly-20260501050000", wantEvents: []string{"BackupCreated", "MissedSlots", "Resumed"}},
		{rule: "a suspended schedule keeps skipImmediately for its unsuspension",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(1)), skipImmediately, set(func(s *v1.ScheduledBackupSpec) {
				s.Suspend = ptr.To(true)
			})}, now: late, wantEvents: []string{"Suspended"},
			check: func(t *testing.T, d Decision) {
				if d.ResetSkipImmediately || d.Status.LastSkipped != nil {
					t.Fatalf("consumed while suspended: %+v", d)
				}
			}},
		{rule: "lastSkipped later than lastScheduleTime is the cron reference",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(1)), func(sb *v1.ScheduledBackup) {
				sb.Status.LastSkipped = timePtr(hour(3).Add(10 * time.Minute))
			}}, now: hour(3).Add(50 * time.Minute),
			check: func(t *testing.T, d Decision) { wantTime(t, "nextScheduleTime", d.Status.NextScheduleTime, hour(4)) }},
		{rule: "the slot after lastSkipped runs normally",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(1)), func(sb *v1.ScheduledBackup) {
				sb.Status.LastSkipped = timePtr(hour(3).Add(10 * time.Minute))
			}}, now: hour(4), wantCreate: "nightly-20260501040000", wantEvents: []string{"BackupCreated"}},
		{rule: "a skip already recorded at this generation is not redone: the reset is retried and slots after it run",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(1)), skipImmediately, func(sb *v1.ScheduledBackup) {
				sb.Status.LastSkipped = timePtr(hour(2).Add(time.Minute))
			}}, now: hour(3).Add(time.Second), wantCreate: "nightly-20260501030000", wantEvents: []string{"BackupCreated"},
			check: wantSkipped(hour(2).Add(time.Minute), hour(4))},
	})
}

// TestDecideRobustnessRules covers downtime, crashes, missing Clusters, failures and history.
func TestDecideRobustnessRules(t *testing.T) {
	failed := func(name string) v1.Backup {
		b := testChild(name, v1.BackupPhaseFailed)
		b.Status.Error = "boom"
		return b
	}
	runDecideCases(t, []decideCase{
		{rule: "after downtime one Backup for the most recent missed slot, never a storm",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(1))}, now: hour(6).Add(10 * time.Minute),
			wantCreate: "nightly-20260501060000", wantEvents: []string{"BackupCreated", "MissedSlots"},
			check: contains("missed", "4 slot(s) from 2026-05-01T02:00:00Z")},
		{rule: "a Backup created before a crash is adopted at its slot and not created again",
			sb:       []func(*v1.ScheduledBackup){checkedAt(created)},
			children: []v1.Backup{testChild("nightly-20260501010000", v1.BackupPhasePending)},
			now:      hour(1).Add(30 * time.Second), wantEvents: []string{"BackupAdopted"},
			check: func(t *testing.T, d Decision) {
				wantTime(t, "lastScheduleTime", d.Status.LastScheduleTime, hour(1))
			}},
		{rule: "a missing Cluster creates nothing, warns and retries soon",
			sb: []func(*v1.ScheduledBackup){checkedAt(created)}, noCluster: true, now: hour(1),
			wantEvents: []string{"ClusterNotFound"},
			check: all(wantReady(metav1.ConditionFalse, reasonClusterNotFound), func(t *testing.T, d Decision) {
				if d.RequeueAfter > clusterRetryInterval {
					t.Fatalf("requeue after %v", d.RequeueAfter)
				}
				wantTime(t, "nextScheduleTime", d.Status.NextScheduleTime, hour(1))
				if c := meta.FindStatusCondition(d.Status.Conditions, v1.ConditionDegraded); c.Status != metav1.ConditionTrue {
					t.Fatalf("Degraded %+v", c)
				}
			})},
		{rule: "a failed previous Backup does not stop the schedule",
			sb:       []func(*v1.ScheduledBackup){scheduledAt(created)},
			children: []v1.Backup{failed("nightly-20260501003000")}, now: hour(1),
			wantCreate: "nightly-20260501010000", wantEvents: []string{"BackupCreated", "BackupFailed"},
			check: func(t *testing.T, d Decision) {
				if c := meta.FindStatusCondition(d.Status.Conditions, v1.ConditionDegraded); c.Reason != reasonBackupFailed {
					t.Fatalf("Degraded %+v", c)
				}
			}},
		{rule: "a completed Backup after a failure clears Degraded with an event",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(1)), func(sb *v1.ScheduledBackup) {
				meta.SetStatusCondition(&sb.Status.Conditions, metav1.Condition{Type: v1.ConditionDegraded,
					Status: metav1.ConditionTrue, Reason: reasonBackupFailed, Message: "x"})
			}},
			children: []v1.Backup{failed("nightly-20260501003000"), testChild("nightly-20260501010000", v1.BackupPhaseCompleted)},
			now:      hour(1).Add(time.Minute), wantEvents: []string{"Recovered"}},
		{rule: "failed Backups beyond the history limit are pruned oldest first",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(5))},
			children: []v1.Backup{failed("nightly-20260501050000"), failed("nightly-20260501010000"),
				failed("nightly-20260501020000"), failed("nightly-20260501030000"), failed("nightly-20260501040000")},
			now: hour(5).Add(time.Minute), wantEvents: []string{"BackupFailed", "BackupsPruned"},
			check: wantPruned("nightly-20260501010000", "nightly-20260501020000")},
		{rule: "completed Backups are all kept without a successful history limit",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(3))},
			children: []v1.Backup{testChild("nightly-20260501010000", v1.BackupPhaseCompleted),
				testChild("nightly-20260501020000", v1.BackupPhaseCompleted), testChild("nightly-20260501030000", v1.BackupPhaseCompleted)},
			now: hour(3).Add(time.Minute), check: wantPruned()},
		{rule: "the successful history limit prunes completed Backups and never running ones",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(3)), set(func(s *v1.ScheduledBackupSpec) {
				s.SuccessfulBackupsHistoryLimit = ptr.To[int32](1)
			})},
			children: []v1.Backup{testChild("nightly-20260501010000", v1.BackupPhaseCompleted),
				testChild("nightly-20260501020000", v1.BackupPhaseCompleted), testChild("nightly-20260501030000", v1.BackupPhaseRunning),
				testChild("manual", v1.BackupPhaseRunning)},
			now: hour(3).Add(time.Minute), wantEvents: []string{"BackupsPruned"}, check: wantPruned("nightly-20260501010000")},
		{rule: "a name that cannot make valid child names is reported and not retried",
			sb:  []func(*v1.ScheduledBackup){func(sb *v1.ScheduledBackup) { sb.Name = strings.Repeat("n", 49) }},
			now: hour(1), wantEvents: []string{"InvalidSchedule"},
			check: all(wantReady(metav1.ConditionFalse, reasonInvalidSchedule), func(t *testing.T, d Decision) {
				if d.RequeueAfter != 0 {
					t.Fatal("requeued")
				}
			})},
		{rule: "a wall clock stepped back creates nothing",
			sb: []func(*v1.ScheduledBackup){scheduledAt(hour(5))}, now: hour(3),
			check: func(t *testing.T, d Decision) { wantTime(t, "nextScheduleTime", d.Status.NextScheduleTime, hour(6)) }},
	})
}

func wantPruned(names ...string) func(*testing.T, Decision) {
	return func(t *testing.T, d Decision) {
		t.Helper()
		var got []string
		for _, p := range d.Prune {
			got = append(got, p.Backup.Name)
		}
		if strings.Join(got, ",") != strings.Join(names, ",") {
			t.Fatalf("pruned %v, want %v", got, names)
		}
	}
}
