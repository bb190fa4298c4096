package clustercontroller

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// podsResources returns each instance Pod's UID and its MySQL container's resources.
func podsResources(ctx context.Context, ns string) (map[string]types.UID, map[string]corev1.ResourceRequirements, error) {
	var pods corev1.PodList
	if err := kc.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return nil, nil, err
	}
	uids, res := map[string]types.UID{}, map[string]corev1.ResourceRequirements{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Spec.Containers {
			if c.Name == specs.MySQLContainerName {
				uids[p.Name], res[p.Name] = p.UID, c.Resources
			}
		}
	}
	return uids, res, nil
}

func cpuAndMemory(cpu, memLimit string) v1.ResourceRequirements {
	r := v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	if memLimit != "" {
		r.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memLimit)}
	}
	return r
}

// TestResourcesResizedInPlace: a change of CPU and memory that keeps the QoS class is applied to
// every instance through the real API server's pods/resize subresource: the Pods keep their UID
// (none is replaced), the primary among them, and the Cluster converges.
func TestResourcesResizedInPlace(t *testing.T) {
	c := readyCluster(t, 3, func(c *v1.Cluster) { c.Spec.Resources = cpuAndMemory("100m", "256Mi") })
	ns := c.Namespace
	before, _, err := podsResources(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	next := cpuAndMemory("200m", "512Mi")
	want := specs.ResizableOf(next.Container())
	updateCluster(t, c, false, func(c *v1.Cluster) { c.Spec.Resources = cpuAndMemory("200m", "512Mi") })
	check.Eventually(t, waitTimeout, "every instance resized in place", func(ctx context.Context) (bool, error) {
		uids, res, err := podsResources(ctx, ns)
		if err != nil {
			return false, err
		}
		for name, uid := range before {
			if uids[name] != uid {
				return false, fmt.Errorf("%s was replaced (UID %s, was %s)", name, uids[name], uid)
			}
			if !specs.SameResizable(res[name], want) {
				return false, fmt.Errorf("%s asks %v", name, res[name])
			}
		}
		return true, nil
	})
	assertEvents(t, ns, "InstanceResizing")
	waitInstances(t, c, "db-1", "db-2", "db-3")
	uids, _, _ := podsResources(context.Background(), ns)
	for name, uid := range before {
		if uids[name] != uid {
			t.Errorf("%s was replaced", name)
		}
	}
}

// TestResizeRefusedReplacesThePod: a change the API server refuses to make in place (a memory
// limit removed) is recorded on the Pod (ResizeRefused) and the replicas are replaced instead,
// with the new resources; the primary's update is then a switchover to an updated replica.
func TestResizeRefusedReplacesThePod(t *testing.T) {
	c := readyCluster(t, 3, func(c *v1.Cluster) { c.Spec.Resources = cpuAndMemory("100m", "256Mi") })
	ns := c.Namespace
	before, _, err := podsResources(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	next := cpuAndMemory("100m", "")
	want := specs.ResizableOf(next.Container())
	updateCluster(t, c, false, func(c *v1.Cluster) { c.Spec.Resources = next })
	check.Eventually(t, waitTimeout, "the replicas replaced with the new resources", func(ctx context.Context) (bool, error) {
		uids, res, err := podsResources(ctx, ns)
		if err != nil {
			return false, err
		}
		for _, name := range []string{"db-2", "db-3"} {
			if uids[name] == "" || uids[name] == before[name] || !specs.SameResizable(res[name], want) {
				return false, fmt.Errorf("%s: UID %s (was %s), asks %v", name, uids[name], before[name], res[name])
			}
		}
		return true, nil
	})
	assertEvents(t, ns, "ResizeRefused", "InstanceUpdating", "PrimaryUpdateSwitchover")
}
