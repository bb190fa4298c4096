package clustercontroller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

func podImage(ctx context.Context, ns, name string) (string, error) {
	var p corev1.Pod
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return p.Spec.Containers[0].Image, nil
}

// TestRollingUpdate changes imageName: replicas are replaced one at a time on their PVCs, the
// primary waits for a switchover, then is replaced as a replica.
func TestRollingUpdate(t *testing.T) {
	c := readyCluster(t, 3, nil)
	ns := c.Namespace
	updateCluster(t, c, false, func(c *v1.Cluster) { c.Spec.ImageName = "mysql:new" })
	check.Eventually(t, waitTimeout, "the replicas run the new image", func(ctx context.Context) (bool, error) {
		i2, err := podImage(ctx, ns, "db-2")
		i3, _ := podImage(ctx, ns, "db-3")
		return i2 == "mysql:new" && i3 == "mysql:new", err
	})
	check.Eventually(t, waitTimeout, "the primary waits for a switchover", func(ctx context.Context) (bool, error) {
		cond := meta.FindStatusCondition(getCluster(t, c).Status.Conditions, v1.ConditionProgressing)
		img, err := podImage(ctx, ns, "db-1")
		return cond != nil && cond.Reason == "PrimaryUpdatePending" && img == "mysql:test", err
	})
	setPrimary(t, c, "db-2")
	check.Eventually(t, waitTimeout, "the former primary runs the new image", func(ctx context.Context) (bool, error) {
		img, err := podImage(ctx, ns, "db-1")
		return img == "mysql:new", err
	})
	waitInstances(t, c, "db-1", "db-2", "db-3")
	assertEvents(t, ns, "InstanceUpdating")
}
