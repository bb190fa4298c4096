package specs

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// BuildPDB returns the Cluster's PodDisruptionBudget: at most one instance may be voluntarily
// evicted at a time, so a node drain never takes two instances (or the primary and its only
// up-to-date replica) down together.
func BuildPDB(c *mysqlv1alpha1.Cluster) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: objectMeta(c, PDBName(c.Name)),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &one,
			Selector:       &metav1.LabelSelector{MatchLabels: ClusterLabels(c.Name)},
		},
	}
}
