package plugin

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// getCluster reads the Cluster a verb works on.
func getCluster(ctx context.Context, c client.Reader, ns, name string) (*v1.Cluster, error) {
	var cluster v1.Cluster
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("cluster %s not found in namespace %s (list them with: kubectl get clusters.mysql.cloudnative-mysql.io -A; -n selects the namespace)", name, ns)
		}
		return nil, fmt.Errorf("reading Cluster %s/%s: %w", ns, name, needs(err, "get", "clusters.mysql.cloudnative-mysql.io", ns))
	}
	return &cluster, nil
}

// checkInstanceOf returns nil when instance belongs to the Cluster: its name is <cluster>-<n> and
// a Pod of that name, labelled for the Cluster, exists. Verbs refuse any other name, so a typo
// never lands in the Cluster's status or annotations.
func checkInstanceOf(ctx context.Context, c client.Reader, cluster *v1.Cluster, instance string) error {
	if _, ok := specs.InstanceSerial(cluster.Name, instance); !ok {
		return fmt.Errorf("%s is not an instance of Cluster %s: instance names are %s-<n>", instance, cluster.Name, cluster.Name)
	}
	var pod corev1.Pod
	err := c.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: instance}, &pod)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s is not an instance of Cluster %s: there is no Pod %s in namespace %s",
			instance, cluster.Name, instance, cluster.Namespace)
	}
	if err != nil {
		return fmt.Errorf("reading Pod %s/%s: %w", cluster.Namespace, instance, needs(err, "get", "pods", cluster.Namespace))
	}
	if pod.Labels[v1.ClusterLabel] != cluster.Name {
		return fmt.Errorf("%s is not an instance of Cluster %s: Pod %s is not labelled %s=%s",
			instance, cluster.Name, instance, v1.ClusterLabel, cluster.Name)
	}
	return nil
}
