package clustercontroller

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestDeletionGarbageCollectsOwnedObjects deletes a Cluster: it holds no finalizer, and the
// garbage collector removes every child through owner references, PVCs included (keep data across
// a Cluster deletion with a Retain reclaim policy).
func TestDeletionGarbageCollectsOwnedObjects(t *testing.T) {
	c := readyCluster(t, 2, nil)
	ns := c.Namespace
	cur := getCluster(t, c)
	if len(cur.Finalizers) != 0 {
		t.Fatalf("the Cluster carries no finalizer: %v", cur.Finalizers)
	}
	if err := kc.Delete(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var pvcs corev1.PersistentVolumeClaimList
			_ = kc.List(context.Background(), &pvcs, client.InNamespace(ns))
			for _, p := range pvcs.Items {
				t.Logf("PVC %s deletion %v finalizers %v owners %v", p.Name, p.DeletionTimestamp, p.Finalizers, p.OwnerReferences)
			}
		}
	})
	for _, l := range []client.ObjectList{&corev1.PodList{}, &corev1.ServiceList{}, &corev1.SecretList{},
		&policyv1.PodDisruptionBudgetList{}, &corev1.PersistentVolumeClaimList{}} {
		check.Eventually(t, waitTimeout, fmt.Sprintf("the garbage collector removes every %T", l), func(ctx context.Context) (bool, error) {
			if err := kc.List(ctx, l, client.InNamespace(ns)); err != nil {
				return false, err
			}
			return meta.LenList(l) == 0, nil
		})
	}
}
