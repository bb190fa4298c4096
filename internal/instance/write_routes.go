package instance

import (
	"context"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// WriteRoutes reads whether an EndpointSlice of one of the Cluster's write Services
// (specs.WriteServiceNames) lists the instance's Pod: whether kube-proxy may still send it
// connections meant for the primary.
type WriteRoutes struct {
	Client  client.Client
	Cluster types.NamespacedName
	Pod     string
}

// Routed reads the Cluster (its write Services may have changed) and their EndpointSlices.
func (w WriteRoutes) Routed(ctx context.Context) (bool, error) {
	var c v1alpha1.Cluster
	if err := w.Client.Get(ctx, w.Cluster, &c); err != nil {
		return false, fmt.Errorf("reading Cluster %s: %w", w.Cluster, err)
	}
	names := specs.WriteServiceNames(&c)
	req, err := labels.NewRequirement(discoveryv1.LabelServiceName, selection.In, names)
	if err != nil {
		return false, fmt.Errorf("selecting the EndpointSlices of %v: %w", names, err)
	}
	var slices discoveryv1.EndpointSliceList
	if err := w.Client.List(ctx, &slices, client.InNamespace(w.Cluster.Namespace),
		client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*req)}); err != nil {
		return false, fmt.Errorf("listing the EndpointSlices of %v: %w", names, err)
	}
	return SlicesListPod(slices.Items, w.Pod), nil
}

// SlicesListPod says whether one of the EndpointSlices lists the Pod, ready or not: kube-proxy
// still sends new connections to a serving, terminating endpoint when no other is ready.
func SlicesListPod(slices []discoveryv1.EndpointSlice, pod string) bool {
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if e.TargetRef != nil && e.TargetRef.Kind == "Pod" && e.TargetRef.Name == pod {
				return true
			}
		}
	}
	return false
}
