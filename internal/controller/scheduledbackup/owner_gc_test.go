package scheduledbackup_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestOwnerReferenceModesUnderGarbageCollection proves the three modes with the real garbage
// collector: deleting the ScheduledBackups collects only the self-owned Backup; deleting the
// Cluster then collects only the cluster-owned one; the standalone Backup survives both.
func TestOwnerReferenceModesUnderGarbageCollection(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cluster := w.createCluster("db")
	modes := map[string]v1.BackupOwnerReference{
		"own-self": v1.BackupOwnerReferenceSelf, "own-cluster": v1.BackupOwnerReferenceCluster, "own-none": v1.BackupOwnerReferenceNone,
	}
	slot := time.Time{}
	for name, mode := range modes {
		w.createSchedule(name, func(s *v1.ScheduledBackupSpec) { s.BackupOwnerReference = mode })
		w.reconcile(name)
		slot = w.firstSlot(name)
	}
	w.Clock.SetTime(slot.Add(time.Hour + time.Second))
	for name := range modes {
		w.reconcile(name)
	}
	child := func(name string) *v1.Backup {
		return &v1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: w.NS, Name: childName(name, slot.Add(time.Hour))}}
	}
	all := w.wantBackups(childName("own-self", slot.Add(time.Hour)), childName("own-cluster", slot.Add(time.Hour)),
		childName("own-none", slot.Add(time.Hour)))
	for name, mode := range modes {
		refs := all[childName(name, slot.Add(time.Hour))].OwnerReferences
		if (mode == v1.BackupOwnerReferenceNone) != (len(refs) == 0) {
			t.Fatalf("%s: owner references %v in mode %s", name, refs, mode)
		}
	}

	for name := range modes {
		if err := w.Client.Delete(w.Ctx, w.schedule(name)); err != nil {
			t.Fatal(err)
		}
	}
	w.Eventually("the collector deletes the self-owned Backup", w.Gone(child("own-self")))
	w.wantBackups(childName("own-cluster", slot.Add(time.Hour)), childName("own-none", slot.Add(time.Hour)))

	if err := w.Client.Delete(w.Ctx, cluster); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the collector deletes the cluster-owned Backup", w.Gone(child("own-cluster")))
	if err := w.Client.Get(w.Ctx, client.ObjectKeyFromObject(child("own-none")), &v1.Backup{}); err != nil {
		t.Fatalf("the standalone Backup did not survive: %v", err)
	}
}
