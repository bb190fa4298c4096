package controller_test

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
func (h *harness) crashBeforeStatus() client.Client {
	return h.intercepting(interceptor.Funcs{
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
func (h *harness) crashBeforeSpecReset() client.Client {
	return h.intercepting(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*v1.ScheduledBackup); ok {
				return errKilled
			}
			return c.Patch(ctx, obj, p, opts...)
		},
	})
}

func (h *harness) intercepting(funcs interceptor.Funcs) client.Client {
	h.t.Helper()
	base, err := client.NewWithWatch(h.env.Config, client.Options{Scheme: h.env.Scheme})
	if err != nil {
		h.t.Fatal(err)
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
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("nightly")
	h.reconcile("nightly")
	slot := h.firstSlot("nightly")
	h.clock.SetTime(slot.Add(200e6))
	crashing := h.crashBeforeStatus()
	for range 3 {
		if _, err := h.reconcileWith(crashing, "nightly"); !errors.Is(err, errKilled) {
			t.Fatalf("reconcile through the crash: %v, want the injected failure", err)
		}
		h.wantBackups(childName("nightly", slot))
	}
	h.clock.Step(3e9)
	h.reconcile("nightly")
	h.reconcile("nightly")
	h.wantBackups(childName("nightly", slot))
	if got := h.schedule("nightly").Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("lastScheduleTime %v, want the adopted slot %v", got, slot)
	}
	if ev := h.events(); !hasEvent(ev, "BackupAdopted") {
		t.Fatalf("events %v lack BackupAdopted", ev)
	}
}

// TestImmediateBackupIsCreatedOnceAndAdoptedAfterACrash: the immediate Backup is created, the
// operator dies before its status patch, and the restarted operator adopts it by label.
func TestImmediateBackupIsCreatedOnceAndAdoptedAfterACrash(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) { s.Immediate = boolPtr(true) })
	if _, err := h.reconcileWith(h.crashBeforeStatus(), "nightly"); !errors.Is(err, errKilled) {
		t.Fatalf("reconcile through the crash: %v", err)
	}
	first := h.backups()
	if len(first) != 1 {
		t.Fatalf("Backups %v, want the one immediate Backup", keys(first))
	}
	name := keys(first)[0]
	if first[name].Labels[v1.ImmediateBackupLabel] != "true" || first[name].Labels[v1.ScheduledBackupLabel] != "nightly" {
		t.Fatalf("immediate Backup labels %v", first[name].Labels)
	}
	h.clock.Step(5e9)
	h.reconcile("nightly")
	h.reconcile("nightly")
	h.wantBackups(name)
	if sb := h.schedule("nightly"); sb.Status.LastScheduleTime == nil {
		t.Fatal("the adopted immediate Backup is not recorded in lastScheduleTime")
	}
	if ev := h.events(); !hasEvent(ev, "ImmediateBackupCreated") || !hasEvent(ev, "BackupAdopted") {
		t.Fatalf("events %v", ev)
	}
}

// TestSkipImmediatelyIsConsumedOnceWhenTheResetFails: the skip is recorded, the operator dies
// before resetting spec.skipImmediately; after the restart the flag is reset without a second skip
// and the slot that came due meanwhile runs.
func TestSkipImmediatelyIsConsumedOnceWhenTheResetFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) { s.SkipImmediately = boolPtr(true) })
	slot := h.firstSlot("nightly")
	h.clock.SetTime(slot.Add(-30e9))
	if _, err := h.reconcileWith(h.crashBeforeSpecReset(), "nightly"); !errors.Is(err, errKilled) {
		t.Fatalf("reconcile through the crash: %v", err)
	}
	skipped := h.schedule("nightly").Status.LastSkipped
	if skipped == nil {
		t.Fatal("lastSkipped was not recorded before the reset")
	}
	h.clock.SetTime(slot.Add(10e9))
	h.reconcile("nightly")
	sb := h.schedule("nightly")
	if sb.WantsSkipImmediately() || !sb.Status.LastSkipped.Equal(skipped) {
		t.Fatalf("skipImmediately %v, lastSkipped %v: want reset and still %v", *sb.Spec.SkipImmediately, sb.Status.LastSkipped, skipped)
	}
	h.reconcile("nightly")
	h.wantBackups(childName("nightly", slot))
}
