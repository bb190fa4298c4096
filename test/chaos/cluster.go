package chaos

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// DefaultTimeoutMillis is the CRD's default spec.mysql.semiSync.timeoutMillis: the checker runs
// with it unless told otherwise, since a fault test that passes only with a tuned timeout proves
// only that timeout.
const DefaultTimeoutMillis = 10000

// ClusterSpec is the Cluster the checker attacks: three instances, semi-sync with one
// acknowledging replica, the given dataDurability and timeoutMillis (DefaultTimeoutMillis when 0),
// and BaseResources (the resize fault changes them in place).
func ClusterSpec(t Target, image string, durability mysqlv1.DataDurability, timeoutMillis int64) *mysqlv1.Cluster {
	if timeoutMillis == 0 {
		timeoutMillis = DefaultTimeoutMillis
	}
	return &mysqlv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name},
		Spec: mysqlv1.ClusterSpec{
			Instances:       3,
			ImageName:       image,
			MinSyncReplicas: 1,
			MaxSyncReplicas: 1,
			MySQL: mysqlv1.MySQLConfiguration{SemiSync: &mysqlv1.SemiSyncConfiguration{
				Enabled: true, TimeoutMillis: timeoutMillis, DataDurability: durability,
			}},
			MaxSwitchoverDelay: 3600,
			Storage:            mysqlv1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Resources:          BaseResources(),
		},
	}
}

// BaseResources are the instances' resources as the checker creates the Cluster: CPU and memory
// requests without limits (QoS Burstable), small enough for three instances on a 2-core node.
func BaseResources() mysqlv1.ResourceRequirements {
	return mysqlv1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")}}
}

// CreateCluster creates the namespace (if missing) and the Cluster.
func (e *Env) CreateCluster(ctx context.Context, c *mysqlv1.Cluster) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.Namespace}}
	if err := e.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", c.Namespace, err)
	}
	if err := e.Client.Create(ctx, c); err != nil {
		return fmt.Errorf("cluster %s/%s: %w", c.Namespace, c.Name, err)
	}
	return nil
}
