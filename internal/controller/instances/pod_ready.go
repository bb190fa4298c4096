package instances

import corev1 "k8s.io/api/core/v1"

// PodReady reports whether the kubelet reports the Pod Running and Ready, and it is not going away.
func PodReady(p *corev1.Pod) bool {
	if p == nil || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
