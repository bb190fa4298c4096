package clustercontroller

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// listedEndpoints lists the Pods the EndpointSlices of service list in any state: ready, or
// serving while terminating (kube-proxy sends new connections to those when no endpoint is ready).
func listedEndpoints(ctx context.Context, ns, service string) ([]string, error) {
	var list discoveryv1.EndpointSliceList
	if err := kc.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
		return nil, err
	}
	out := []string{}
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			if ep.TargetRef != nil {
				out = append(out, ep.TargetRef.Name)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// TestTerminatingPrimaryLeavesRW: a primary whose Pod is terminating is suspected: its routable
// label goes at once, so the EndpointSlices of -rw no longer list it at all, not even as serving
// while terminating, while its Pod still exists (a finalizer holds it, as a kubelet that cannot
// stop it would). Without it, kube-proxy would keep sending new connections to it while no other
// endpoint is ready.
func TestTerminatingPrimaryLeavesRW(t *testing.T) {
	c := readyCluster(t, 3, nil)
	ns := c.Namespace
	waitEndpoints(t, ns, map[string][]string{"db-rw": {"db-1"}})
	var pod corev1.Pod
	check.Must(t, kc.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "db-1"}, &pod))
	held := pod.DeepCopy()
	held.Finalizers = append(held.Finalizers, "test.cloudnative-mysql.io/hold")
	check.Must(t, kc.Patch(t.Context(), held, client.MergeFrom(&pod)))
	t.Cleanup(func() {
		var p corev1.Pod
		if kc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db-1"}, &p) == nil {
			free := p.DeepCopy()
			free.Finalizers = slices.DeleteFunc(free.Finalizers, func(f string) bool { return f == "test.cloudnative-mysql.io/hold" })
			_ = kc.Patch(context.Background(), free, client.MergeFrom(&p))
		}
	})
	check.Must(t, kc.Delete(t.Context(), held))
	check.Eventually(t, waitTimeout, "db-1 terminating, without the routable label, listed by no EndpointSlice of db-rw", func(ctx context.Context) (bool, error) {
		var p corev1.Pod
		if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-1"}, &p); err != nil {
			return false, err
		}
		listed, err := listedEndpoints(ctx, ns, "db-rw")
		return p.DeletionTimestamp != nil && p.Labels[v1.RoutableLabel] != specs.RoutableTrue && !slices.Contains(listed, "db-1"), err
	})
}
