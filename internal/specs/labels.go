package specs

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// RoutableTrue is the RoutableLabel value of instances the role Services may route to.
const RoutableTrue = "true"

// ClusterLabels are the labels every object of a Cluster carries; children are found by them.
func ClusterLabels(cluster string) map[string]string {
	return map[string]string{mysqlv1alpha1.ClusterLabel: cluster}
}

// InstanceLabels are the labels of an instance's Pod. role is primary, replica or empty (an
// instance whose role is not established yet carries no role label, so no role Service selects
// it); routable is false for fenced or otherwise excluded instances.
func InstanceLabels(cluster, instance, role string, routable bool) map[string]string {
	l := map[string]string{
		mysqlv1alpha1.ClusterLabel:  cluster,
		mysqlv1alpha1.InstanceLabel: instance,
	}
	if role != "" {
		l[mysqlv1alpha1.RoleLabel] = role
	}
	if routable {
		l[mysqlv1alpha1.RoutableLabel] = RoutableTrue
	}
	return l
}

// OwnerReference makes the Cluster the controller owner of a child, so deleting the Cluster
// garbage-collects it.
func OwnerReference(c *mysqlv1alpha1.Cluster) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{
		APIVersion:         mysqlv1alpha1.GroupVersion.String(),
		Kind:               "Cluster",
		Name:               c.Name,
		UID:                c.UID,
		Controller:         &t,
		BlockOwnerDeletion: &t,
	}
}

// objectMeta is the metadata shared by every child: name, namespace, cluster label, owner.
func objectMeta(c *mysqlv1alpha1.Cluster, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       c.Namespace,
		Labels:          ClusterLabels(c.Name),
		OwnerReferences: []metav1.OwnerReference{OwnerReference(c)},
	}
}

// mergeLabels returns user overlaid with operator: on a shared key the second map wins.
func mergeLabels(user, operator map[string]string) map[string]string {
	out := make(map[string]string, len(user)+len(operator))
	for k, v := range user {
		out[k] = v
	}
	for k, v := range operator {
		out[k] = v
	}
	return out
}
