package scheduledbackup_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// errKilled stands for the operator dying between two writes.
var errKilled = errors.New("injected: the operator stopped before this write")

// crashBeforeStatus is a client whose ScheduledBackup status patches never land, as if the
// operator were killed right after creating a Backup.
func (w *world) crashBeforeStatus() client.Client {
	return w.intercepting(interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*v1.ScheduledBackup); ok && sub == "status" {
				return errKilled
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
}

// crashBeforeSpecReset is a client whose ScheduledBackup spec patches never land: the operator
// dies after recording a skip and before resetting spec.skipImmediately.
func (w *world) crashBeforeSpecReset() client.Client {
	return w.intercepting(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*v1.ScheduledBackup); ok {
				return errKilled
			}
			return c.Patch(ctx, obj, p, opts...)
		},
	})
}

func (w *world) intercepting(funcs interceptor.Funcs) client.Client {
	w.T.Helper()
	base, err := client.NewWithWatch(w.Env.Config, client.Options{Scheme: w.Env.Scheme})
	if err != nil {
		w.T.Fatal(err)
	}
	return interceptor.NewClient(base, funcs)
}

func hasEvent(events []string, reason string) bool {
	for _, e := range events {
		if strings.Contains(e, " "+reason+" ") {
			return true
		}
	}
	return false
}

// TestCrashAfterCreateLeavesExactlyOneBackupForTheSlot kills the operator after the Backup
// create and before the status patch, three times over, then restarts it.
func TestCrashAfterCreateLeavesExactlyOneBackupForTheSlot(t *testing.T) {
	t.Parallel()
	w, slot := newNightly(t)
	w.Clock.SetTime(slot.Add(200e6))
	crashing := w.crashBeforeStatus()
	for range 3 {
		if _, err := w.reconcileWith(crashing, "nightly"); !errors.Is(err, errKilled) {
			t.Fatalf("reconcile through the crash: %v, want the injected failure", err)
		}
		w.wantBackups(childName("nightly", slot))
	}
	w.Clock.Step(3e9)
	w.reconcile("nightly")
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", slot))
	if got := w.schedule("nightly").Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("lastScheduleTime %v, want the adopted slot %v", got, slot)
	}
	if ev := w.Events(); !hasEvent(ev, "BackupAdopted") {
		t.Fatalf("events %v lack BackupAdopted", ev)
	}
}

// TestImmediateBackupIsCreatedOnceAndAdoptedAfterACrash: the immediate Backup is created, the
// operator dies before its status patch, and the restarted operator adopts it by label.
func TestImmediateBackupIsCreatedOnceAndAdoptedAfterACrash(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.createCluster("db")
	w.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) { s.Immediate = boolPtr(true) })
	if _, err := w.reconcileWith(w.crashBeforeStatus(), "nightly"); !errors.Is(err, errKilled) {
		t.Fatalf("reconcile through the crash: %v", err)
	}
	first := w.backups()
	if len(first) != 1 {
		t.Fatalf("Backups %v, want the one immediate Backup", keys(first))
	}
	name := keys(first)[0]
	if first[name].Labels[v1.ImmediateBackupLabel] != "true" || first[name].Labels[v1.ScheduledBackupLabel] != "nightly" {
		t.Fatalf("immediate Backup labels %v", first[name].Labels)
	}
	w.Clock.Step(5e9)
	w.reconcile("nightly")
	w.reconcile("nightly")
	w.wantBackups(name)
	if sb := w.schedule("nightly"); sb.Status.LastScheduleTime == nil {
		t.Fatal("the adopted immediate Backup is not recorded in lastScheduleTime")
	}
	if ev := w.Events(); !hasEvent(ev, "ImmediateBackupCreated") || !hasEvent(ev, "BackupAdopted") {
		t.Fatalf("events %v", ev)
	}
}

// TestSkipImmediatelyIsConsumedOnceWhenTheResetFails: the skip is recorded, the operator dies
// before resetting spec.skipImmediately; after the restart the flag is reset without a second skip
// and the slot that came due meanwhile runs.
func TestSkipImmediatelyIsConsumedOnceWhenTheResetFails(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.createCluster("db")
	w.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) { s.SkipImmediately = boolPtr(true) })
	slot := w.firstSlot("nightly")
	w.Clock.SetTime(slot.Add(-30e9))
	if _, err := w.reconcileWith(w.crashBeforeSpecReset(), "nightly"); !errors.Is(err, errKilled) {
		t.Fatalf("reconcile through the crash: %v", err)
	}
	skipped := w.schedule("nightly").Status.LastSkipped
	if skipped == nil {
		t.Fatal("lastSkipped was not recorded before the reset")
	}
	w.Clock.SetTime(slot.Add(10e9))
	w.reconcile("nightly")
	sb := w.schedule("nightly")
	if !resetToFalse(sb) || !sb.Status.LastSkipped.Equal(skipped) {
		t.Fatalf("skipImmediately %v, lastSkipped %v: want reset and still %v", sb.Spec.SkipImmediately, sb.Status.LastSkipped, skipped)
	}
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", slot))
}

// TestOperatorDefaultSkipIsConsumedOnceWhenTheResetFails: with skipImmediately unset and the
// operator's default true, the skip is recorded and the operator dies before writing the field;
// after the restart the schedule has skipped once already, so unset is false: no second skip,
// and the slot that came due meanwhile runs.
func TestOperatorDefaultSkipIsConsumedOnceWhenTheResetFails(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.skipDefault = true
	w.createCluster("db")
	w.createSchedule("nightly")
	slot := w.firstSlot("nightly")
	w.Clock.SetTime(slot.Add(-30e9))
	if _, err := w.reconcileWith(w.crashBeforeSpecReset(), "nightly"); !errors.Is(err, errKilled) {
		t.Fatalf("reconcile through the crash: %v", err)
	}
	skipped := w.schedule("nightly").Status.LastSkipped
	if skipped == nil {
		t.Fatal("lastSkipped was not recorded before the crash")
	}
	w.Clock.SetTime(slot.Add(10e9))
	w.reconcile("nightly")
	w.reconcile("nightly")
	if sb := w.schedule("nightly"); !sb.Status.LastSkipped.Equal(skipped) {
		t.Fatalf("lastSkipped %v, want still %v (no second skip)", sb.Status.LastSkipped, skipped)
	}
	w.wantBackups(childName("nightly", slot))
}
