package controller_test

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// remoteCleanupFinalizer stands for the Backup controller's finalizer that deletes remote data
// according to deletionPolicy; holding it lets the test see what a pruned Backup was left with.
const remoteCleanupFinalizer = "test.cloudnative-mysql.io/remote-cleanup"

// TestHistoryLimitsPruneBackupObjectsButKeepRemoteData runs six slots (alternately completed and
// failed) with both limits at one: the newest of each phase stays, the others are deleted, and
// every deleted Backup was first set to deletionPolicy keep so no remote data goes with it.
func TestHistoryLimitsPruneBackupObjectsButKeepRemoteData(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) {
		s.SuccessfulBackupsHistoryLimit, s.FailedBackupsHistoryLimit = int32Ptr(1), int32Ptr(1)
		s.DeletionPolicy = v1.DeletionPolicyDelete
	})
	h.reconcile("nightly")
	first := h.firstSlot("nightly")
	var names []string
	for i := range 6 {
		slot := first.Add(time.Duration(i) * time.Hour)
		h.clock.SetTime(slot)
		h.reconcile("nightly")
		name := childName("nightly", slot)
		names = append(names, name)
		h.addFinalizer(name)
		phase := v1.BackupPhaseCompleted
		if i%2 == 1 {
			phase = v1.BackupPhaseFailed
		}
		h.setPhase(name, phase)
	}
	h.reconcile("nightly")
	t.Cleanup(func() { h.removeFinalizers() })

	for i, name := range names {
		var b v1.Backup
		if err := h.env.Client.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &b); err != nil {
			t.Fatalf("reading %s: %v", name, err)
		}
		kept := i >= len(names)-2
		if kept != (b.DeletionTimestamp == nil) {
			t.Fatalf("%s (%s): deleted=%v, want kept=%v", name, b.Status.Phase, b.DeletionTimestamp != nil, kept)
		}
		if !kept && b.Spec.DeletionPolicy != v1.DeletionPolicyKeep {
			t.Fatalf("%s was deleted with deletionPolicy %q: its remote data would go too", name, b.Spec.DeletionPolicy)
		}
		if kept && b.Spec.DeletionPolicy != v1.DeletionPolicyDelete {
			t.Fatalf("%s is kept but its deletionPolicy changed to %q", name, b.Spec.DeletionPolicy)
		}
	}
	if ev := h.events(); !hasEvent(ev, "BackupsPruned") {
		t.Fatalf("events %v", ev)
	}
}

func int32Ptr(v int32) *int32 { return &v }

func (h *harness) addFinalizer(name string) {
	h.t.Helper()
	var b v1.Backup
	if err := h.env.Client.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &b); err != nil {
		h.t.Fatal(err)
	}
	b.Finalizers = append(b.Finalizers, remoteCleanupFinalizer)
	if err := h.env.Client.Update(h.ctx, &b); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) removeFinalizers() {
	var list v1.BackupList
	if err := h.env.Client.List(context.Background(), &list, client.InNamespace(h.ns)); err != nil {
		return
	}
	for i := range list.Items {
		b := &list.Items[i]
		b.Finalizers = nil
		_ = h.env.Client.Update(context.Background(), b)
	}
}
