package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// instancePods lists the Cluster's instance Pods, by name.
func instancePods(ctx context.Context, c client.Reader, cluster *v1.Cluster) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(cluster.Namespace), client.MatchingLabels{v1.ClusterLabel: cluster.Name},
		client.HasLabels{v1.InstanceLabel}); err != nil {
		return nil, fmt.Errorf("listing the Pods of Cluster %s: %w", cluster.Name, needs(err, "list", "pods", cluster.Namespace))
	}
	out := pods.Items
	slices.SortFunc(out, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// pickInstance chooses the instance Pod a verb works in: instance when named (it must be one of
// the Cluster's), a ready replica when replica, the current primary otherwise.
func pickInstance(ctx context.Context, c client.Reader, cluster *v1.Cluster, instance string, replica bool) (string, error) {
	switch {
	case instance != "":
		if err := checkInstanceOf(ctx, c, cluster, instance); err != nil {
			return "", err
		}
		return instance, nil
	case replica:
		pods, err := instancePods(ctx, c, cluster)
		if err != nil {
			return "", err
		}
		for _, p := range pods {
			if p.Labels[v1.RoleLabel] == v1.RoleReplica && instances.PodReady(&p) {
				return p.Name, nil
			}
		}
		return "", fmt.Errorf("Cluster %s has no ready replica", cluster.Name)
	case cluster.Status.CurrentPrimary == "":
		return "", fmt.Errorf("Cluster %s has no primary yet: name an instance (%s-<n>)", cluster.Name, cluster.Name)
	}
	return cluster.Status.CurrentPrimary, nil
}

// mysqlContainer is the instance Pod's container that runs the instance manager and mysqld.
const mysqlContainer = specs.MySQLContainerName
