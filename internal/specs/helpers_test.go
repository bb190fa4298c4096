package specs

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// testCluster returns a three-instance Cluster as the API server would default it.
func testCluster() *mysqlv1alpha1.Cluster {
	return &mysqlv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "uid-1"},
		Spec: mysqlv1alpha1.ClusterSpec{
			Instances: 3,
			ImageName: "percona/percona-server:8.4",
			Storage:   mysqlv1alpha1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Resources: mysqlv1alpha1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
		},
	}
}

func withServices(c *mysqlv1alpha1.Cluster, s mysqlv1alpha1.ManagedServices) *mysqlv1alpha1.Cluster {
	c.Spec.Managed = &mysqlv1alpha1.ManagedConfiguration{Services: &s}
	return c
}

func serviceNames(svcs []*corev1.Service) []string {
	out := make([]string, 0, len(svcs))
	for _, s := range svcs {
		out = append(out, s.Name)
	}
	return out
}

func ownedByCluster(meta metav1.ObjectMeta) bool {
	return len(meta.OwnerReferences) == 1 && meta.OwnerReferences[0].UID == "uid-1" &&
		meta.OwnerReferences[0].Kind == "Cluster" && *meta.OwnerReferences[0].Controller
}
