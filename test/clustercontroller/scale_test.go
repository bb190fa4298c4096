package clustercontroller

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestScaleUpAndDown scales a Cluster up, down past its primary's serial, and up again.
func TestScaleUpAndDown(t *testing.T) {
	c := readyCluster(t, 2, nil)
	ns := c.Namespace
	scale := func(n int32) { updateCluster(t, c, false, func(c *v1.Cluster) { c.Spec.Instances = n }) }

	t.Run("scale up adds the next serial", func(t *testing.T) {
		scale(3)
		waitInstances(t, c, "db-1", "db-2", "db-3")
	})
	t.Run("scale down removes the highest serial replica, never the primary, and keeps its PVC", func(t *testing.T) {
		setPrimary(t, c, "db-3") // the highest serial is the primary now
		scale(1)
		waitInstances(t, c, "db-3")
		if got := names(t, ns, &corev1.PersistentVolumeClaimList{}); !slices.Equal(got, []string{"db-1", "db-2", "db-3"}) {
			t.Errorf("PVCs of removed instances are kept: %v", got)
		}
		for _, name := range []string{"db-1", "db-2"} {
			var pvc corev1.PersistentVolumeClaim
			if err := kc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &pvc); err != nil ||
				pvc.Annotations[specs.DetachedAnnotation] == "" {
				t.Errorf("PVC %s is marked detached: %v %v", name, err, pvc.Annotations)
			}
		}
		check.Eventually(t, waitTimeout, "the removed instances' headless Services go", func(context.Context) (bool, error) {
			got := names(t, ns, &corev1.ServiceList{})
			return slices.Equal(got, []string{"db-3", "db-r", "db-ro", "db-rw"}), nil
		})
		check.Eventually(t, waitTimeout, "the removed instances' server certificates go", func(context.Context) (bool, error) {
			got := names(t, ns, &corev1.SecretList{})
			return !slices.Contains(got, "db-1-server-tls") && !slices.Contains(got, "db-2-server-tls") &&
				slices.Contains(got, "db-3-server-tls"), nil
		})
		waitEndpoints(t, ns, map[string][]string{"db-rw": {"db-3"}, "db-ro": {}})
		assertEvents(t, ns, "InstanceRemoved")
	})
	t.Run("scaling up again never reuses a serial", func(t *testing.T) {
		scale(2)
		waitInstances(t, c, "db-3", "db-4")
		check.Eventually(t, waitTimeout, "latestGeneratedNode records serial 4", func(context.Context) (bool, error) {
			return getCluster(t, c).Status.LatestGeneratedNode == 4, nil
		})
	})
	t.Run("a deleted Pod is recreated on its retained PVC", func(t *testing.T) {
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = "db-4", ns
		var before corev1.Pod
		if err := kc.Get(context.Background(), client.ObjectKeyFromObject(pod), &before); err != nil {
			t.Fatal(err)
		}
		if err := kc.Delete(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		check.Eventually(t, waitTimeout, "db-4 comes back as a new Pod", func(ctx context.Context) (bool, error) {
			var after corev1.Pod
			err := kc.Get(ctx, client.ObjectKeyFromObject(pod), &after)
			return err == nil && after.UID != before.UID, client.IgnoreNotFound(err)
		})
		waitInstances(t, c, "db-3", "db-4")
		if got := names(t, ns, &corev1.PersistentVolumeClaimList{}); len(got) != 4 {
			t.Errorf("no new PVC: %v", got)
		}
	})
}

// TestScaleDownDeletesPVCsWhenAsked: with storage.whenScaledDown Delete, a scale-down deletes the
// removed instance's PVC once its Pod is gone; the remaining instances' PVCs stay.
func TestScaleDownDeletesPVCsWhenAsked(t *testing.T) {
	c := readyCluster(t, 3, func(c *v1.Cluster) { c.Spec.Storage.WhenScaledDown = v1.PVCDelete })
	ns := c.Namespace
	updateCluster(t, c, false, func(c *v1.Cluster) { c.Spec.Instances = 2 })
	waitInstances(t, c, "db-1", "db-2")
	check.Eventually(t, waitTimeout, "the removed instance's PVC is deleted", func(context.Context) (bool, error) {
		got := names(t, ns, &corev1.PersistentVolumeClaimList{})
		return slices.Equal(got, []string{"db-1", "db-2"}), nil
	})
	assertEvents(t, ns, "InstanceRemoved", "PVCDeleted")
}
