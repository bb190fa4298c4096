package controller_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller"
)

// TestSlotStatusWaitsAndFoldsIntoTheBackupsEnd: with a StatusDelay, a slot's Backup is created and
// its status written only when the reconciler looks again; a Backup that failed meanwhile is
// recorded in the same single status write, and recording its own Backup is not an adoption.
func TestSlotStatusWaitsAndFoldsIntoTheBackupsEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("nightly")
	var statusWrites atomic.Int32
	c := h.intercepting(interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*v1.ScheduledBackup); ok && sub == "status" {
				statusWrites.Add(1)
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	r := &controller.ScheduledBackupReconciler{Client: c, APIReader: c, Recorder: h.recorder, Clock: h.clock,
		StatusDelay: time.Second}
	if _, err := r.Reconcile(h.ctx, requestFor(h, "nightly")); err != nil {
		t.Fatal(err)
	}
	slot := h.firstSlot("nightly")
	h.clock.SetTime(slot)
	before := statusWrites.Load()
	res, err := r.Reconcile(h.ctx, requestFor(h, "nightly"))
	if err != nil || res.RequeueAfter != time.Second {
		t.Fatalf("reconcile at the slot: %+v, %v; want a look again after the StatusDelay", res, err)
	}
	name := childName("nightly", slot)
	h.wantBackups(name)
	if statusWrites.Load() != before || h.schedule("nightly").Status.LastScheduleTime != nil {
		t.Fatal("the status was written with the create")
	}

	h.setPhase(name, v1.BackupPhaseFailed)
	h.clock.Step(200 * time.Millisecond)
	if _, err := r.Reconcile(h.ctx, requestFor(h, "nightly")); err != nil {
		t.Fatal(err)
	}
	sb := h.schedule("nightly")
	if got := sb.Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("lastScheduleTime %v, want %v", got, slot)
	}
	if c := meta.FindStatusCondition(sb.Status.Conditions, v1.ConditionDegraded); c == nil || c.Reason != "BackupFailed" {
		t.Fatalf("Degraded %+v", c)
	}
	if n := statusWrites.Load() - before; n != 1 {
		t.Fatalf("%d status writes for the slot and the failure, want 1", n)
	}
	h.clock.Step(time.Second)
	if _, err := r.Reconcile(h.ctx, requestFor(h, "nightly")); err != nil {
		t.Fatal(err)
	}
	if n := statusWrites.Load() - before; n != 1 {
		t.Fatalf("%d status writes after the delayed look, want still 1", n)
	}
	h.wantBackups(name)
	ev := h.events()
	if !hasEvent(ev, "BackupCreated") || !hasEvent(ev, "BackupFailed") || hasEvent(ev, "BackupAdopted") {
		t.Fatalf("events %v: want BackupCreated and BackupFailed, no BackupAdopted", ev)
	}
}
