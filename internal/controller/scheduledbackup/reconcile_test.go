package scheduledbackup_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func wantCondition(t *testing.T, sb *v1.ScheduledBackup, typ string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	c := meta.FindStatusCondition(sb.Status.Conditions, typ)
	if c == nil || c.Status != status || c.Reason != reason {
		t.Fatalf("%s = %+v, want %s/%s", typ, c, status, reason)
	}
}

func TestFirstReconcileStampsStatusWithoutABackup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.createCluster("db")
	w.createSchedule("nightly")
	res := w.reconcile("nightly")
	sb := w.schedule("nightly")
	if sb.Status.LastCheckTime == nil || sb.Status.LastScheduleTime != nil {
		t.Fatalf("status %+v: want lastCheckTime and no lastScheduleTime", sb.Status)
	}
	if next := sb.Status.NextScheduleTime; next == nil || !next.Time.Equal(w.firstSlot("nightly")) {
		t.Fatalf("nextScheduleTime %v, want %v", next, w.firstSlot("nightly"))
	}
	wantCondition(t, sb, v1.ConditionReady, metav1.ConditionTrue, "Scheduled")
	if res.RequeueAfter <= 0 {
		t.Fatalf("result %+v: want a requeue toward the next slot", res)
	}
	w.wantBackups()
}

func TestDueSlotCreatesOneBackupAtTheDeterministicNameInheritingTheSpec(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.createCluster("db")
	w.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) {
		s.Method, s.Target, s.Online = v1.BackupMethodXtraBackup, v1.BackupTargetPrimary, boolPtr(false)
		s.Timeout, s.DeletionPolicy = &metav1.Duration{Duration: time.Hour}, v1.DeletionPolicyDelete
	})
	w.reconcile("nightly")
	slot := w.firstSlot("nightly")
	w.Clock.SetTime(slot.Add(300 * time.Millisecond))
	w.reconcile("nightly")
	w.reconcile("nightly")
	b := w.wantBackups(childName("nightly", slot))[childName("nightly", slot)]
	s := b.Spec
	if s.Cluster.Name != "db" || s.Method != v1.BackupMethodXtraBackup || s.Target != v1.BackupTargetPrimary ||
		*s.Online || s.Timeout.Duration != time.Hour || s.DeletionPolicy != v1.DeletionPolicyDelete {
		t.Fatalf("Backup spec %+v does not inherit the schedule's", s)
	}
	if b.Labels[v1.ScheduledBackupLabel] != "nightly" || len(b.OwnerReferences) != 0 {
		t.Fatalf("labels %v, owners %v: want the schedule label and no owner (mode none)", b.Labels, b.OwnerReferences)
	}
	sb := w.schedule("nightly")
	if !sb.Status.LastScheduleTime.Time.Equal(slot) || !sb.Status.NextScheduleTime.Time.Equal(slot.Add(time.Hour)) {
		t.Fatalf("status %+v", sb.Status)
	}
	if ev := w.Events(); !hasEvent(ev, "BackupCreated") {
		t.Fatalf("events %v", ev)
	}
}

func TestDowntimeYieldsOneBackupForTheMostRecentSlot(t *testing.T) {
	t.Parallel()
	w, first := newNightly(t)
	latest := first.Add(5 * time.Hour)
	w.Clock.SetTime(latest.Add(10 * time.Minute))
	w.reconcile("nightly")
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", latest))
	if ev := w.Events(); !hasEvent(ev, "MissedSlots") {
		t.Fatalf("events %v lack MissedSlots", ev)
	}
}

func TestConcurrencyGuardWaitsForTheRunningBackupAndAFailureDoesNotStopTheSchedule(t *testing.T) {
	t.Parallel()
	w, first := newNightly(t)
	second := first.Add(time.Hour)
	w.Clock.SetTime(first)
	w.reconcile("nightly")
	w.setPhase(childName("nightly", first), v1.BackupPhaseRunning)
	w.Clock.SetTime(second.Add(time.Second))
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", first))
	sb := w.schedule("nightly")
	wantCondition(t, sb, v1.ConditionReady, metav1.ConditionTrue, "BackupRunning")
	if !sb.Status.NextScheduleTime.Time.Equal(second) {
		t.Fatalf("nextScheduleTime %v, want the waiting slot %v", sb.Status.NextScheduleTime, second)
	}
	w.setPhase(childName("nightly", first), v1.BackupPhaseFailed)
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", first), childName("nightly", second))
	sb = w.schedule("nightly")
	wantCondition(t, sb, v1.ConditionDegraded, metav1.ConditionTrue, "BackupFailed")
	ev := w.Events()
	for _, reason := range []string{"BackupDeferred", "BackupFailed", "BackupCreated"} {
		if !hasEvent(ev, reason) {
			t.Fatalf("events %v lack %s", ev, reason)
		}
	}
}

func TestNameCollisionIsNotAdoptedAndSkipsTheSlot(t *testing.T) {
	t.Parallel()
	w, first := newNightly(t)
	foreign := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: childName("nightly", first), Namespace: w.NS},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "other"}}}
	if err := w.Client.Create(w.Ctx, foreign); err != nil {
		t.Fatal(err)
	}
	w.Clock.SetTime(first.Add(time.Second))
	w.reconcile("nightly")
	w.reconcile("nightly")
	got := w.wantBackups(foreign.Name)[foreign.Name]
	if got.ResourceVersion != foreign.ResourceVersion || len(got.Labels) != 0 {
		t.Fatalf("the foreign Backup was touched: %+v", got.ObjectMeta)
	}
	sb := w.schedule("nightly")
	if sb.Status.LastSkipped == nil || !sb.Status.LastSkipped.Time.Equal(first) || sb.Status.LastScheduleTime != nil {
		t.Fatalf("status %+v: want the slot recorded as skipped", sb.Status)
	}
	if ev := w.Events(); !hasEvent(ev, "NameCollision") {
		t.Fatalf("events %v lack NameCollision", ev)
	}
	w.Clock.SetTime(first.Add(time.Hour))
	w.reconcile("nightly")
	w.wantBackups(foreign.Name, childName("nightly", first.Add(time.Hour)))
}

func TestSuspendCreatesNothingAndLeavesExistingBackupsAlone(t *testing.T) {
	t.Parallel()
	w, first := newNightly(t)
	w.Clock.SetTime(first)
	w.reconcile("nightly")
	w.setPhase(childName("nightly", first), v1.BackupPhaseRunning)
	before := w.wantBackups(childName("nightly", first))
	w.updateSpec("nightly", func(s *v1.ScheduledBackupSpec) { s.Suspend = boolPtr(true) })
	w.Clock.SetTime(first.Add(3*time.Hour + time.Minute))
	if res := w.reconcile("nightly"); res.RequeueAfter != 0 {
		t.Fatalf("a suspended schedule is requeued: %+v", res)
	}
	after := w.wantBackups(childName("nightly", first))
	if after[childName("nightly", first)].ResourceVersion != before[childName("nightly", first)].ResourceVersion {
		t.Fatal("suspension touched an existing Backup")
	}
	sb := w.schedule("nightly")
	wantCondition(t, sb, v1.ConditionReady, metav1.ConditionFalse, "Suspended")
	if sb.Status.NextScheduleTime != nil {
		t.Fatalf("nextScheduleTime %v while suspended", sb.Status.NextScheduleTime)
	}
	w.setPhase(childName("nightly", first), v1.BackupPhaseCompleted)
	w.updateSpec("nightly", func(s *v1.ScheduledBackupSpec) { s.Suspend = boolPtr(false) })
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", first), childName("nightly", first.Add(3*time.Hour)))
	ev := w.Events()
	for _, reason := range []string{"Suspended", "Resumed", "MissedSlots"} {
		if !hasEvent(ev, reason) {
			t.Fatalf("events %v lack %s", ev, reason)
		}
	}
}

func TestMissingClusterWarnsAndRetriesUntilItExists(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.createSchedule("nightly")
	w.reconcile("nightly")
	first := w.firstSlot("nightly")
	w.Clock.SetTime(first.Add(time.Second))
	res := w.reconcile("nightly")
	w.wantBackups()
	if res.RequeueAfter <= 0 || res.RequeueAfter > 30*time.Second {
		t.Fatalf("result %+v: want a retry within 30s", res)
	}
	sb := w.schedule("nightly")
	wantCondition(t, sb, v1.ConditionReady, metav1.ConditionFalse, "ClusterNotFound")
	wantCondition(t, sb, v1.ConditionDegraded, metav1.ConditionTrue, "ClusterNotFound")
	if ev := w.Events(); !hasEvent(ev, "ClusterNotFound") {
		t.Fatalf("events %v lack the ClusterNotFound warning", ev)
	}
	w.createCluster("db")
	w.Clock.Step(res.RequeueAfter)
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", first))
	wantCondition(t, w.schedule("nightly"), v1.ConditionReady, metav1.ConditionTrue, "Scheduled")
}
