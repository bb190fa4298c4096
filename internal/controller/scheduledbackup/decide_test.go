package scheduledbackup

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func set(f func(*v1.ScheduledBackupSpec)) func(*v1.ScheduledBackup) {
	return func(sb *v1.ScheduledBackup) { f(&sb.Spec) }
}

// TestDecideSeedRules has one row per rule of the ScheduledBackup seed's verification coverage.
func TestDecideSeedRules(t *testing.T) {
	at := hour(1).Add(400 * time.Millisecond)
	runDecideCases(t, []decideCase{
		{rule: "an unparsable schedule is reported and not retried",
			sb: []func(*v1.ScheduledBackup){set(func(s *v1.ScheduledBackupSpec) { s.Schedule = "0 2 * * *" })}, now: at,
			wantEvents: []string{"InvalidSchedule"},
			check: all(wantReady(metav1.ConditionFalse, reasonInvalidSchedule), func(t *testing.T, d Decision) {
				if d.RequeueAfter != 0 || d.Status.LastCheckTime != nil {
					t.Fatalf("requeue %v, lastCheckTime %v: want neither", d.RequeueAfter, d.Status.LastCheckTime)
				}
			})},
		{rule: "a schedule firing more often than --min-schedule-interval creates nothing, not even its immediate Backup",
			sb:  []func(*v1.ScheduledBackup){set(func(s *v1.ScheduledBackupSpec) { s.Schedule, s.Immediate = "*/10 * * * * *", ptr.To(true) })},
			now: at, minGap: time.Minute, wantEvents: []string{"ScheduleTooFrequent"},
			check: all(wantReady(metav1.ConditionFalse, reasonTooFrequent), func(t *testing.T, d Decision) {
				if d.Status.NextScheduleTime != nil {
					t.Fatalf("nextScheduleTime %v for a refused schedule", d.Status.NextScheduleTime)
				}
			})},
		{rule: "a schedule firing exactly every --min-schedule-interval runs",
			sb:  []func(*v1.ScheduledBackup){set(func(s *v1.ScheduledBackupSpec) { s.Schedule, s.Immediate = "0 * * * * *", ptr.To(true) })},
			now: at, minGap: time.Minute, wantCreate: "nightly-20260501010000", wantEvents: []string{"ImmediateBackupCreated"},
			check: wantReady(metav1.ConditionTrue, reasonScheduled)},
		{rule: "--min-schedule-interval 0 accepts any schedule",
			sb:  []func(*v1.ScheduledBackup){set(func(s *v1.ScheduledBackupSpec) { s.Schedule, s.Immediate = "* * * * * *", ptr.To(true) })},
			now: at, wantCreate: "nightly-20260501010000", wantEvents: []string{"ImmediateBackupCreated"},
			check: wantReady(metav1.ConditionTrue, reasonScheduled)},
		{rule: "first check stamps lastCheckTime and nextScheduleTime without a Backup and waits for the slot",
			now: hour(1).Add(-30 * time.Second),
			check: all(wantReady(metav1.ConditionTrue, reasonScheduled), func(t *testing.T, d Decision) {
				wantTime(t, "lastCheckTime", d.Status.LastCheckTime, hour(1).Add(-30*time.Second))
				wantTime(t, "nextScheduleTime", d.Status.NextScheduleTime, hour(1))
				wantTime(t, "lastScheduleTime", d.Status.LastScheduleTime, time.Time{})
				if d.RequeueAfter != 30*time.Second {
					t.Fatalf("requeue after %v, want until the next slot", d.RequeueAfter)
				}
			})},
		{rule: "a far slot is waited for in bounded steps", now: created.Add(time.Second),
			check: func(t *testing.T, d Decision) {
				if d.RequeueAfter != maxRequeueInterval {
					t.Fatalf("requeue after %v, want %v", d.RequeueAfter, maxRequeueInterval)
				}
			}},
		{rule: "a reconcile with nothing to do writes no status",
			sb: []func(*v1.ScheduledBackup){func(sb *v1.ScheduledBackup) {
				sb.Status = Decide(Observation{Now: created.Add(time.Second), Schedule: sb.DeepCopy(),
					Cluster: &v1.Cluster{}}).Status
			}}, now: created.Add(time.Minute),
			check: func(t *testing.T, d Decision) {
				wantTime(t, "lastCheckTime", d.Status.LastCheckTime, created.Add(time.Second))
			}},
		{rule: "the due slot creates its Backup at the deterministic UTC name",
			sb: []func(*v1.ScheduledBackup){checkedAt(created)}, now: at,
			wantCreate: "nightly-20260501010000", wantEvents: []string{"BackupCreated"},
			check: func(t *testing.T, d Decision) {
				wantTime(t, "lastScheduleTime", d.Status.LastScheduleTime, hour(1))
				wantTime(t, "nextScheduleTime", d.Status.NextScheduleTime, hour(2))
				wantTime(t, "lastCheckTime", d.Status.LastCheckTime, hour(1))
			}},
		{rule: "the Backup inherits cluster, method, target, online, timeout and deletion policy, and is labelled",
			sb: []func(*v1.ScheduledBackup){checkedAt(created), set(func(s *v1.ScheduledBackupSpec) {
				s.Method, s.Target, s.Online = v1.BackupMethodXtraBackup, v1.BackupTargetPrimary, ptr.To(false)
				s.Timeout, s.DeletionPolicy = &metav1.Duration{Duration: time.Hour}, v1.DeletionPolicyDelete
			})}, now: at, wantCreate: "nightly-20260501010000", wantEvents: []string{"BackupCreated"},
			check: func(t *testing.T, d Decision) {
				want := v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "db"}, Method: v1.BackupMethodXtraBackup,
					Target: v1.BackupTargetPrimary, Online: ptr.To(false), Timeout: &metav1.Duration{Duration: time.Hour},
					DeletionPolicy: v1.DeletionPolicyDelete}
				if got := d.Create.Spec; !specEqual(got, want) {
					t.Fatalf("spec %+v, want %+v", got, want)
				}
				if l := d.Create.Labels; l[v1.ScheduledBackupLabel] != "nightly" || l[v1.ClusterLabel] != "db" || l[v1.ImmediateBackupLabel] != "" {
					t.Fatalf("labels %v", l)
				}
			}},
		{rule: "suspended creates nothing, clears the next slot and is not requeued",
			sb:       []func(*v1.ScheduledBackup){scheduledAt(created), set(func(s *v1.ScheduledBackupSpec) { s.Suspend = ptr.To(true) })},
			children: []v1.Backup{testChild("nightly-20260501003000", v1.BackupPhaseRunning)}, now: hour(5),
			wantEvents: []string{"Suspended"},
			check: all(wantReady(metav1.ConditionFalse, reasonSuspended), func(t *testing.T, d Decision) {
				if d.RequeueAfter != 0 || len(d.Prune) != 0 || d.Status.NextScheduleTime != nil {
					t.Fatalf("suspended decision acts: %+v", d)
				}
			})},
		{rule: "immediate creates one labelled Backup on the first reconcile",
			sb:  []func(*v1.ScheduledBackup){set(func(s *v1.ScheduledBackupSpec) { s.Immediate = ptr.To(true) })},
			now: created.Add(2500 * time.Millisecond), wantCreate: "nightly-20260501003002", wantEvents: []string{"ImmediateBackupCreated"},
			check: func(t *testing.T, d Decision) {
				if d.Create.Labels[v1.ImmediateBackupLabel] != "true" {
					t.Fatalf("labels %v", d.Create.Labels)
				}
				wantTime(t, "lastScheduleTime", d.Status.LastScheduleTime, created.Add(2*time.Second))
				wantTime(t, "nextScheduleTime", d.Status.NextScheduleTime, hour(1))
			}},
		{rule: "immediate adopts its Backup found by label instead of firing again",
			sb:       []func(*v1.ScheduledBackup){set(func(s *v1.ScheduledBackupSpec) { s.Immediate = ptr.To(true) })},
			children: []v1.Backup{testChild("nightly-20260501003002", v1.BackupPhasePending, v1.ImmediateBackupLabel, "true")},
			now:      created.Add(10 * time.Second), wantEvents: []string{"BackupAdopted"},
			check: func(t *testing.T, d Decision) {
				wantTime(t, "lastScheduleTime", d.Status.LastScheduleTime, created.Add(2*time.Second))
			}},
		{rule: "immediate fires only once: a schedule that already ran does not fire it again",
			sb:  []func(*v1.ScheduledBackup){scheduledAt(hour(1)), set(func(s *v1.ScheduledBackupSpec) { s.Immediate = ptr.To(true) })},
			now: hour(1).Add(time.Minute)},
		{rule: "owner reference none leaves the Backup standalone",
			sb: []func(*v1.ScheduledBackup){checkedAt(created)}, now: at,
			wantCreate: "nightly-20260501010000", wantEvents: []string{"BackupCreated"},
			check: wantOwner("", "")},
		{rule: "owner reference self makes the ScheduledBackup the controller owner",
			sb: []func(*v1.ScheduledBackup){checkedAt(created), set(func(s *v1.ScheduledBackupSpec) {
				s.BackupOwnerReference = v1.BackupOwnerReferenceSelf
			})}, now: at, wantCreate: "nightly-20260501010000", wantEvents: []string{"BackupCreated"},
			check: wantOwner("ScheduledBackup", "sb-uid")},
		{rule: "owner reference cluster makes the Cluster the controller owner",
			sb: []func(*v1.ScheduledBackup){checkedAt(created), set(func(s *v1.ScheduledBackupSpec) {
				s.BackupOwnerReference = v1.BackupOwnerReferenceCluster
			})}, now: at, wantCreate: "nightly-20260501010000", wantEvents: []string{"BackupCreated"},
			check: wantOwner("Cluster", "cluster-uid")},
		{rule: "concurrency guard defers the slot while a child is neither completed nor failed",
			sb:       []func(*v1.ScheduledBackup){scheduledAt(created)},
			children: []v1.Backup{testChild("nightly-20260501003000", v1.BackupPhaseRunning)}, now: at,
			wantEvents: []string{"BackupDeferred"},
			check: all(wantReady(metav1.ConditionTrue, reasonBackupRunning), func(t *testing.T, d Decision) {
				wantTime(t, "nextScheduleTime", d.Status.NextScheduleTime, hour(1))
				if d.RequeueAfter <= 0 {
					t.Fatal("no requeue while deferred")
				}
			})},
		{rule: "concurrency guard ignores a child that is being deleted",
			sb: []func(*v1.ScheduledBackup){scheduledAt(created)},
			children: []v1.Backup{func() v1.Backup {
				b := testChild("nightly-20260501003000", v1.BackupPhaseRunning)
				b.DeletionTimestamp = ptr.To(metav1.NewTime(at))
				return b
			}()}, now: at, wantCreate: "nightly-20260501010000", wantEvents: []string{"BackupCreated"}},
		{rule: "a name taken by a Backup without our label is not adopted: the slot is skipped",
			sb: []func(*v1.ScheduledBackup){checkedAt(created)}, now: at,
			occupant:   &v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "nightly-20260501010000", Namespace: "ns"}},
			wantEvents: []string{"NameCollision"},
			check: all(wantReady(metav1.ConditionTrue, reasonScheduled), func(t *testing.T, d Decision) {
				wantTime(t, "lastSkipped", d.Status.LastSkipped, hour(1))
				wantTime(t, "lastScheduleTime", d.Status.LastScheduleTime, time.Time{})
				wantTime(t, "nextScheduleTime", d.Status.NextScheduleTime, hour(2))
			})},
	})
}

func specEqual(a, b v1.BackupSpec) bool {
	return a.Cluster == b.Cluster && a.Method == b.Method && a.Target == b.Target &&
		ptr.Deref(a.Online, true) == ptr.Deref(b.Online, true) && a.Timeout.Duration == b.Timeout.Duration &&
		a.DeletionPolicy == b.DeletionPolicy
}

func wantOwner(kind, uid string) func(*testing.T, Decision) {
	return func(t *testing.T, d Decision) {
		t.Helper()
		refs := d.Create.OwnerReferences
		if kind == "" {
			if len(refs) != 0 {
				t.Fatalf("owner references %v, want none", refs)
			}
			return
		}
		if len(refs) != 1 || refs[0].Kind != kind || string(refs[0].UID) != uid || !ptr.Deref(refs[0].Controller, false) {
			t.Fatalf("owner references %+v, want a controller reference to %s %s", refs, kind, uid)
		}
	}
}
