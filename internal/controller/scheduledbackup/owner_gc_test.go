package controller_test

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
	h := newHarness(t)
	cluster := h.createCluster("db")
	modes := map[string]v1.BackupOwnerReference{
		"own-self": v1.BackupOwnerReferenceSelf, "own-cluster": v1.BackupOwnerReferenceCluster, "own-none": v1.BackupOwnerReferenceNone,
	}
	slot := time.Time{}
	for name, mode := range modes {
		h.createSchedule(name, func(s *v1.ScheduledBackupSpec) { s.BackupOwnerReference = mode })
		h.reconcile(name)
		slot = h.firstSlot(name)
	}
	h.clock.SetTime(slot.Add(time.Hour + time.Second))
	for name := range modes {
		h.reconcile(name)
	}
	child := func(name string) *v1.Backup {
		return &v1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: childName(name, slot.Add(time.Hour))}}
	}
	all := h.wantBackups(childName("own-self", slot.Add(time.Hour)), childName("own-cluster", slot.Add(time.Hour)),
		childName("own-none", slot.Add(time.Hour)))
	for name, mode := range modes {
		refs := all[childName(name, slot.Add(time.Hour))].OwnerReferences
		if (mode == v1.BackupOwnerReferenceNone) != (len(refs) == 0) {
			t.Fatalf("%s: owner references %v in mode %s", name, refs, mode)
		}
	}

	for name := range modes {
		if err := h.env.Client.Delete(h.ctx, h.schedule(name)); err != nil {
			t.Fatal(err)
		}
	}
	h.eventually("the collector deletes the self-owned Backup", h.gone(child("own-self")))
	h.wantBackups(childName("own-cluster", slot.Add(time.Hour)), childName("own-none", slot.Add(time.Hour)))

	if err := h.env.Client.Delete(h.ctx, cluster); err != nil {
		t.Fatal(err)
	}
	h.eventually("the collector deletes the cluster-owned Backup", h.gone(child("own-cluster")))
	if err := h.env.Client.Get(h.ctx, client.ObjectKeyFromObject(child("own-none")), &v1.Backup{}); err != nil {
		t.Fatalf("the standalone Backup did not survive: %v", err)
	}
}
