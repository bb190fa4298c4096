package scheduledbackup_test

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestHistoryLimitsPruneBackupObjectsButKeepRemoteData runs six slots (alternately completed and
// failed) with both limits at one and deletionPolicy delete; every other Backup carries the
// Backup controller's remote-cleanup finalizer. The newest of each phase stays, the others are
// deleted: those with the finalizer (whose deletion would delete remote data) were set to
// deletionPolicy keep first, and the finalizer still holds them so the test sees what they were
// deleted with; those without it are gone at once, nothing left that could delete remote data.
func TestHistoryLimitsPruneBackupObjectsButKeepRemoteData(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.createCluster("db")
	w.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) {
		s.SuccessfulBackupsHistoryLimit, s.FailedBackupsHistoryLimit = int32Ptr(1), int32Ptr(1)
		s.DeletionPolicy = v1.DeletionPolicyDelete
	})
	t.Cleanup(func() { w.removeFinalizers() })
	w.reconcile("nightly")
	first := w.firstSlot("nightly")
	var names []string
	for i := range 6 {
		slot := first.Add(time.Duration(i) * time.Hour)
		w.Clock.SetTime(slot)
		w.reconcile("nightly")
		name := childName("nightly", slot)
		names = append(names, name)
		if i%2 == 0 {
			w.addFinalizer(name)
		}
		phase := v1.BackupPhaseCompleted
		if i%2 == 1 {
			phase = v1.BackupPhaseFailed
		}
		w.setPhase(name, phase)
	}
	w.reconcile("nightly")

	for i, name := range names {
		kept, finalizer := i >= len(names)-2, i%2 == 0
		var b v1.Backup
		err := w.Client.Get(w.Ctx, client.ObjectKey{Namespace: w.NS, Name: name}, &b)
		switch {
		case !kept && !finalizer:
			if !apierrors.IsNotFound(err) {
				t.Fatalf("%s (no finalizer, beyond the limit): %v, want it deleted", name, err)
			}
			continue
		case err != nil:
			t.Fatalf("reading %s: %v", name, err)
		}
		if kept != (b.DeletionTimestamp == nil) {
			t.Fatalf("%s (%s): deleted=%v, want kept=%v", name, b.Status.Phase, b.DeletionTimestamp != nil, kept)
		}
		if !kept && b.Spec.DeletionPolicy != v1.DeletionPolicyKeep {
			t.Fatalf("%s was deleted with deletionPolicy %q and the remote-cleanup finalizer: its remote data would go too",
				name, b.Spec.DeletionPolicy)
		}
		if kept && b.Spec.DeletionPolicy != v1.DeletionPolicyDelete {
			t.Fatalf("%s is kept but its deletionPolicy changed to %q", name, b.Spec.DeletionPolicy)
		}
	}
	if ev := w.Events(); !hasEvent(ev, "BackupsPruned") {
		t.Fatalf("events %v", ev)
	}
}

// TestPruneNeverDeletesABackupThatGainedTheFinalizerSinceItWasRead: the reconciler's cache shows a
// failed Backup beyond the limit without the remote-cleanup finalizer, but the Backup controller
// has added it since. The direct delete holds only for the version read, so it fails and the
// Backup stays untouched; the next reconcile sees the finalizer, sets deletionPolicy keep, then
// deletes it.
func TestPruneNeverDeletesABackupThatGainedTheFinalizerSinceItWasRead(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.createCluster("db")
	w.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) {
		s.FailedBackupsHistoryLimit = int32Ptr(0)
		s.DeletionPolicy = v1.DeletionPolicyDelete
	})
	t.Cleanup(func() { w.removeFinalizers() })
	w.reconcile("nightly")
	slot := w.firstSlot("nightly")
	w.Clock.SetTime(slot)
	w.reconcile("nightly")
	name := childName("nightly", slot)
	w.setPhase(name, v1.BackupPhaseFailed)

	lc := &laggingCache{sb: w.schedule("nightly"), list: &v1.BackupList{}}
	if err := w.Client.List(w.Ctx, lc.list, client.InNamespace(w.NS)); err != nil {
		t.Fatal(err)
	}
	lc.frozen = true
	w.addFinalizer(name)
	w.Clock.Step(time.Minute)
	res, err := w.reconcileWith(w.laggingClient(lc), "nightly")
	if err != nil || res.RequeueAfter == 0 {
		t.Fatalf("reconcile on the stale view: %+v, %v; want a quick retry", res, err)
	}
	b := w.backup(name)
	if b.DeletionTimestamp != nil || b.Spec.DeletionPolicy != v1.DeletionPolicyDelete {
		t.Fatalf("%s was deleted (%v) or changed (deletionPolicy %q) from a view without its finalizer",
			name, b.DeletionTimestamp, b.Spec.DeletionPolicy)
	}

	w.reconcile("nightly")
	b = w.backup(name)
	if b.DeletionTimestamp == nil || b.Spec.DeletionPolicy != v1.DeletionPolicyKeep {
		t.Fatalf("%s: deleted %v with deletionPolicy %q, want deleted with keep", name, b.DeletionTimestamp, b.Spec.DeletionPolicy)
	}
}

func (w *world) addFinalizer(name string) {
	w.T.Helper()
	var b v1.Backup
	if err := w.Client.Get(w.Ctx, client.ObjectKey{Namespace: w.NS, Name: name}, &b); err != nil {
		w.T.Fatal(err)
	}
	b.Finalizers = append(b.Finalizers, v1.RemoteCleanupFinalizer)
	if err := w.Client.Update(w.Ctx, &b); err != nil {
		w.T.Fatal(err)
	}
}

func (w *world) removeFinalizers() {
	var list v1.BackupList
	if err := w.Client.List(context.Background(), &list, client.InNamespace(w.NS)); err != nil {
		return
	}
	for i := range list.Items {
		b := &list.Items[i]
		b.Finalizers = nil
		_ = w.Client.Update(context.Background(), b)
	}
}
