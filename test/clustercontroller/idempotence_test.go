package clustercontroller

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// resourceVersions maps kind/name to resourceVersion for every object of the Cluster's namespace
// the controller writes, the Cluster included.
func resourceVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range []client.ObjectList{&v1.ClusterList{}, &corev1.PodList{}, &corev1.PersistentVolumeClaimList{},
		&corev1.ServiceList{}, &corev1.SecretList{}, &corev1.ServiceAccountList{}, &rbacv1.RoleList{},
		&rbacv1.RoleBindingList{}, &policyv1.PodDisruptionBudgetList{}} {
		if err := kc.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		items, _ := meta.ExtractList(l)
		for _, o := range items {
			obj := o.(client.Object)
			out[fmt.Sprintf("%T/%s", l, obj.GetName())] = obj.GetResourceVersion()
		}
	}
	return out
}

// TestConvergedClusterWritesNothing lets a converged Cluster go through several reconciles and
// checks that no object, and not the Cluster's status, was written.
func TestConvergedClusterWritesNothing(t *testing.T) {
	c := readyCluster(t, 2, nil)
	check.Eventually(t, waitTimeout, "the Cluster is Ready", func(context.Context) (bool, error) {
		return meta.IsStatusConditionTrue(getCluster(t, c).Status.Conditions, v1.ConditionReady), nil
	})
	// Let the last transition's writes land: wait for a quiet second.
	before := resourceVersions(t, c.Namespace)
	for i := 0; i < 10; i++ {
		time.Sleep(time.Second)
		now := resourceVersions(t, c.Namespace)
		if maps.Equal(before, now) {
			break
		}
		before = now
	}
	if len(before) < 20 {
		t.Fatalf("expected every object of the Cluster, got %v", before)
	}
	time.Sleep(2 * time.Second) // four report intervals: four reconciles
	if after := resourceVersions(t, c.Namespace); !maps.Equal(before, after) {
		for k, v := range after {
			if before[k] != v {
				t.Errorf("%s was written: resourceVersion %s -> %s", k, before[k], v)
			}
		}
	}
}
