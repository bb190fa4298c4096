package clustercontroller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// storageClass creates a StorageClass whose provisioner nothing runs: the test plays it, and the
// external resizer, by writing the PVCs' status as they do.
func storageClass(t *testing.T, name string, expandable bool) {
	t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "example.com/test",
		AllowVolumeExpansion: &expandable}
	if err := kc.Create(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kc.Delete(context.Background(), sc) })
}

// setPVCStatus writes a PVC's status as the provisioner and the resizer do.
func setPVCStatus(t *testing.T, ns, name string, f func(*corev1.PersistentVolumeClaimStatus)) {
	t.Helper()
	check.Eventually(t, waitTimeout, "writing the status of PVC "+name, func(ctx context.Context) (bool, error) {
		var pvc corev1.PersistentVolumeClaim
		if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pvc); err != nil {
			return false, err
		}
		f(&pvc.Status)
		err := kc.Status().Update(ctx, &pvc)
		return err == nil, err
	})
}

// bindPVCs plays the provisioner: each PVC is bound with the capacity it asks for.
func bindPVCs(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		setPVCStatus(t, ns, name, func(s *corev1.PersistentVolumeClaimStatus) {
			s.Phase = corev1.ClaimBound
			s.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
			s.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
		})
	}
}

func pvcRequest(ctx context.Context, ns, name string) (resource.Quantity, error) {
	var pvc corev1.PersistentVolumeClaim
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pvc); err != nil {
		return resource.Quantity{}, err
	}
	return pvc.Spec.Resources.Requests[corev1.ResourceStorage], nil
}

// storageCondition waits until StorageResized has reason and a message holding want.
func storageCondition(t *testing.T, c *v1.Cluster, reason, want string) {
	t.Helper()
	check.Eventually(t, waitTimeout, "StorageResized "+reason, func(context.Context) (bool, error) {
		cond := meta.FindStatusCondition(getCluster(t, c).Status.Conditions, v1.ConditionStorageResized)
		if cond == nil {
			return false, fmt.Errorf("no StorageResized condition")
		}
		if cond.Reason == reason && strings.Contains(cond.Message, want) {
			return true, nil
		}
		return false, fmt.Errorf("StorageResized %s: %s", cond.Reason, cond.Message)
	})
}

// TestStorageGrowth raises storage.size on the real API server: the operator asks every PVC of an
// expandable class for the new size (the API server's resize admission checks the class too), and
// follows the resizer's steps in StorageResized until every capacity reached it.
func TestStorageGrowth(t *testing.T) {
	class := "expandable"
	storageClass(t, class, true)
	c := readyCluster(t, 2, func(c *v1.Cluster) { c.Spec.Storage.StorageClass = &class })
	ns := c.Namespace
	bindPVCs(t, ns, "db-1", "db-2")
	storageCondition(t, c, "Resized", "every instance's volume has storage.size 1Gi")

	updateCluster(t, c, false, func(c *v1.Cluster) { c.Spec.Storage.Size = resource.MustParse("2Gi") })
	for _, name := range []string{"db-1", "db-2"} {
		check.Eventually(t, waitTimeout, "PVC "+name+" asks for 2Gi", func(ctx context.Context) (bool, error) {
			q, err := pvcRequest(ctx, ns, name)
			return q.Cmp(resource.MustParse("2Gi")) == 0, err
		})
	}
	storageCondition(t, c, "Resizing", "db-1 1Gi of 2Gi (the storage provider grows the volume)")
	assertEvents(t, ns, "VolumeExpanding")

	// The resizer grew the volumes; the file system of db-2 waits for its node.
	setPVCStatus(t, ns, "db-1", func(s *corev1.PersistentVolumeClaimStatus) {
		s.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
	})
	setPVCStatus(t, ns, "db-2", func(s *corev1.PersistentVolumeClaimStatus) {
		s.AllocatedResources = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
		s.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{
			corev1.ResourceStorage: corev1.PersistentVolumeClaimNodeResizePending}
		s.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimFileSystemResizePending,
			Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	})
	storageCondition(t, c, "Resizing", "db-2 1Gi of 2Gi (the node grows the file system)")

	// The kubelet grew db-2's file system.
	setPVCStatus(t, ns, "db-2", func(s *corev1.PersistentVolumeClaimStatus) {
		s.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
		s.AllocatedResourceStatuses, s.Conditions = nil, nil
	})
	storageCondition(t, c, "Resized", "every instance's volume has storage.size 2Gi")
	assertEvents(t, ns, "StorageResized")
}

// TestStorageGrowthRefused: a StorageClass that cannot expand refuses the growth; no PVC changes,
// and the condition and a Warning say why and what to do.
func TestStorageGrowthRefused(t *testing.T) {
	class := "fixed"
	storageClass(t, class, false)
	c := readyCluster(t, 2, func(c *v1.Cluster) { c.Spec.Storage.StorageClass = &class })
	ns := c.Namespace
	bindPVCs(t, ns, "db-1", "db-2")
	updateCluster(t, c, false, func(c *v1.Cluster) { c.Spec.Storage.Size = resource.MustParse("2Gi") })
	storageCondition(t, c, "ExpansionNotSupported", "StorageClass "+class+" of PVC db-1 does not allow volume expansion")
	assertEvents(t, ns, "StorageNotResized")
	for _, name := range []string{"db-1", "db-2"} {
		q, err := pvcRequest(context.Background(), ns, name)
		if err != nil || q.Cmp(resource.MustParse("1Gi")) != 0 {
			t.Errorf("PVC %s asks for %s (%v); want it unchanged at 1Gi", name, q.String(), err)
		}
	}
}
