package specs

import (
	corev1 "k8s.io/api/core/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// DetachedAnnotation is set on the PVC of an instance removed by a scale-down. Its data is kept,
// but the controller no longer counts it as an instance nor recreates its Pod; the serial stays
// used, so it is never reused.
const DetachedAnnotation = "mysql.cloudnative-mysql.io/detached"

// DeleteWhenDetachedAnnotation marks a PVC detached under storage.whenScaledDown Delete: only
// such a PVC is ever deleted (one detached under Retain stays, even if the policy changes later).
const DeleteWhenDetachedAnnotation = "mysql.cloudnative-mysql.io/delete-when-detached"

// BuildPVC returns the data volume claim of instance serial of c. The claim is owned by the
// Cluster (deleted with it; keep data across a Cluster deletion with a Retain reclaim policy) and
// outlives its Pod: scale-down and failover delete Pods, never claims.
func BuildPVC(c *mysqlv1alpha1.Cluster, serial int32) *corev1.PersistentVolumeClaim {
	name := InstanceName(c.Name, serial)
	meta := objectMeta(c, name)
	meta.Labels = InstanceLabels(c.Name, name, "", false)
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: meta,
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: c.Spec.Storage.StorageClass,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: c.Spec.Storage.Size.DeepCopy(),
			}},
		},
	}
}
