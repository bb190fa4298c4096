package clustercontroller

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// names lists the names of the objects of kind list in ns.
func names(t *testing.T, ns string, list client.ObjectList) []string {
	t.Helper()
	if err := kc.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	switch l := list.(type) {
	case *corev1.PodList:
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
	case *corev1.PersistentVolumeClaimList:
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
	case *corev1.ServiceList:
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
	case *corev1.SecretList:
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
	}
	slices.Sort(out)
	return out
}

// readyEndpoints lists the Pods the EndpointSlices of service report ready, sorted.
func readyEndpoints(ctx context.Context, ns, service string) ([]string, error) {
	var slicesList discoveryv1.EndpointSliceList
	if err := kc.List(ctx, &slicesList, client.InNamespace(ns),
		client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
		return nil, err
	}
	out := []string{}
	for _, s := range slicesList.Items {
		for _, ep := range s.Endpoints {
			if ep.TargetRef != nil && ptr.Deref(ep.Conditions.Ready, false) {
				out = append(out, ep.TargetRef.Name)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// waitEndpoints waits until each Service's EndpointSlices list exactly the given ready Pods.
func waitEndpoints(t *testing.T, ns string, want map[string][]string) {
	t.Helper()
	for svc, pods := range want {
		check.Eventually(t, waitTimeout, svc+" selects "+fmtList(pods), func(ctx context.Context) (bool, error) {
			got, err := readyEndpoints(ctx, ns, svc)
			return slices.Equal(got, pods), err
		})
	}
}

func fmtList(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	out := s[0]
	for _, x := range s[1:] {
		out += "," + x
	}
	return out
}

// waitInstances waits until exactly the named Pods exist.
func waitInstances(t *testing.T, c *v1.Cluster, want ...string) {
	t.Helper()
	check.Eventually(t, waitTimeout, "instances "+fmtList(want), func(context.Context) (bool, error) {
		return slices.Equal(names(t, c.Namespace, &corev1.PodList{}), want), nil
	})
}
