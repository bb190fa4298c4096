package clustercontroller

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// TestRollingUpdateSupervised changes imageName with primaryUpdateStrategy supervised: replicas are
// replaced one at a time on their PVCs, the primary waits for a person's switchover and says so,
// then is replaced as a replica.
func TestRollingUpdateSupervised(t *testing.T) {
	c := readyCluster(t, 3, func(c *v1.Cluster) { c.Spec.PrimaryUpdateStrategy = v1.PrimaryUpdateSupervised })
	ns := c.Namespace
	updateCluster(t, c, false, func(c *v1.Cluster) { c.Spec.ImageName = "mysql:new" })
	waitReplicasUpdated(t, ns)
	check.Eventually(t, waitTimeout, "the primary waits for a person's switchover", func(ctx context.Context) (bool, error) {
		cur := getCluster(t, c)
		cond := meta.FindStatusCondition(cur.Status.Conditions, v1.ConditionProgressing)
		img, err := podImage(ctx, ns, "db-1")
		return cond != nil && cond.Reason == "PrimaryUpdateWaitingForPromote" && img == "mysql:test" && cur.Status.TargetPrimary == "db-1", err
	})
	assertEvents(t, ns, "InstanceUpdating", "PrimaryUpdateWaitingForPromote")
	setPrimary(t, c, "db-2")
	waitFormerPrimaryUpdated(t, ns)
	waitInstances(t, c, "db-1", "db-2", "db-3")
}

// TestRollingUpdateUnsupervised changes imageName with the defaults: once the replicas run it, the
// operator itself names an updated replica as the target primary (a switchover), and replaces the
// old primary once the target reports itself primary.
func TestRollingUpdateUnsupervised(t *testing.T) {
	c := readyCluster(t, 3, nil)
	ns := c.Namespace
	updateCluster(t, c, false, func(c *v1.Cluster) { c.Spec.ImageName = "mysql:new" })
	waitReplicasUpdated(t, ns)
	var target string
	check.Eventually(t, waitTimeout, "the operator switches over to an updated replica", func(ctx context.Context) (bool, error) {
		target = getCluster(t, c).Status.TargetPrimary
		img, err := podImage(ctx, ns, target)
		return target != "db-1" && img == "mysql:new", err
	})
	assertEvents(t, ns, "InstanceUpdating", "PrimaryUpdateSwitchover")
	if img, _ := podImage(context.Background(), ns, "db-1"); img != "mysql:test" {
		t.Errorf("the primary db-1 was replaced before the switchover: it runs %s", img)
	}
	setPrimary(t, c, target) // the target promoted itself
	waitFormerPrimaryUpdated(t, ns)
	waitInstances(t, c, "db-1", "db-2", "db-3")
}

func waitReplicasUpdated(t *testing.T, ns string) {
	t.Helper()
	check.Eventually(t, waitTimeout, "the replicas run the new image", func(ctx context.Context) (bool, error) {
		i2, err := podImage(ctx, ns, "db-2")
		i3, _ := podImage(ctx, ns, "db-3")
		return i2 == "mysql:new" && i3 == "mysql:new", err
	})
}

func waitFormerPrimaryUpdated(t *testing.T, ns string) {
	t.Helper()
	check.Eventually(t, waitTimeout, "the former primary runs the new image", func(ctx context.Context) (bool, error) {
		img, err := podImage(ctx, ns, "db-1")
		return img == "mysql:new", err
	})
}

// TestRollingUpdateHeldWhileTheNewPodIsRefused: a spec the Cluster admits but the API server
// refuses for a Pod (a PriorityClass that does not exist) replaces no Pod: the new Pod is tried in
// a dry run first, the rollout waits and says why, and it goes on once the class exists.
func TestRollingUpdateHeldWhileTheNewPodIsRefused(t *testing.T) {
	c := readyCluster(t, 2, nil)
	ns := c.Namespace
	uid := func(ctx context.Context, name string) (string, error) {
		var p corev1.Pod
		err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)
		return string(p.UID), client.IgnoreNotFound(err)
	}
	before, err := uid(context.Background(), "db-2")
	if err != nil || before == "" {
		t.Fatalf("db-2: %q %v", before, err)
	}
	class := "held-" + ns
	updateCluster(t, c, false, func(c *v1.Cluster) { c.Spec.PriorityClassName = class })
	check.Eventually(t, waitTimeout, "the rollout waits, naming the refusal", func(context.Context) (bool, error) {
		cond := meta.FindStatusCondition(getCluster(t, c).Status.Conditions, v1.ConditionProgressing)
		return cond != nil && strings.Contains(cond.Message, "the API server refuses the new spec's Pod of") &&
			strings.Contains(cond.Message, class), nil
	})
	assertEvents(t, ns, "InstanceRefused")
	for _, name := range []string{"db-1", "db-2"} {
		if now, err := uid(context.Background(), name); err != nil || (name == "db-2" && now != before) || now == "" {
			t.Errorf("%s was replaced (or is gone) while its new Pod is refused: %q %v", name, now, err)
		}
	}
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Value: 10}
	if err := kc.Create(context.Background(), pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kc.Delete(context.Background(), pc) })
	check.Eventually(t, waitTimeout, "db-2 replaced once its new Pod is admitted", func(ctx context.Context) (bool, error) {
		now, err := uid(ctx, "db-2")
		return now != "" && now != before, err
	})
}
