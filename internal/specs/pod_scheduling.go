package specs

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// applyScheduling copies the Cluster's scheduling fields into an instance Pod's spec: the
// anti-affinity between the Cluster's instances, the node selector, tolerations, topology spread
// and priority class. They are part of the spec, so of its hash: a change rolls the Cluster.
func applyScheduling(spec *corev1.PodSpec, c *mysqlv1alpha1.Cluster) {
	a := &c.Spec.Affinity
	spec.Affinity = instanceAntiAffinity(c.Name, a)
	if len(a.NodeSelector) > 0 {
		spec.NodeSelector = maps.Clone(a.NodeSelector)
	}
	for _, t := range a.Tolerations {
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{
			Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect,
			TolerationSeconds: clonePtr(t.TolerationSeconds),
		})
	}
	for _, t := range c.Spec.TopologySpreadConstraints {
		spec.TopologySpreadConstraints = append(spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew:            t.MaxSkew,
			TopologyKey:        t.TopologyKey,
			WhenUnsatisfiable:  t.WhenUnsatisfiable,
			LabelSelector:      &metav1.LabelSelector{MatchLabels: ClusterLabels(c.Name)},
			MinDomains:         clonePtr(t.MinDomains),
			NodeAffinityPolicy: clonePtr(t.NodeAffinityPolicy),
			NodeTaintsPolicy:   clonePtr(t.NodeTaintsPolicy),
		})
	}
	spec.PriorityClassName = c.Spec.PriorityClassName
}

// instanceAntiAffinity keeps a Cluster's instances on distinct values of the topology key: a
// preference by default (a single-node cluster still schedules every instance), a requirement
// when asked. Nil when anti-affinity is off.
func instanceAntiAffinity(cluster string, a *mysqlv1alpha1.AffinityConfiguration) *corev1.Affinity {
	if a.EnablePodAntiAffinity != nil && !*a.EnablePodAntiAffinity {
		return nil
	}
	term := corev1.PodAffinityTerm{
		TopologyKey:   a.TopologyKey,
		LabelSelector: &metav1.LabelSelector{MatchLabels: ClusterLabels(cluster)},
	}
	if term.TopologyKey == "" {
		term.TopologyKey = corev1.LabelHostname
	}
	if a.PodAntiAffinityType == mysqlv1alpha1.PodAntiAffinityRequired {
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term},
		}}
	}
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: term}},
	}}
}

// applyPodMetadata adds the Cluster's podMetadata to an instance Pod's labels and annotations;
// the operator's own keys win.
func applyPodMetadata(meta *metav1.ObjectMeta, c *mysqlv1alpha1.Cluster) {
	pm := c.Spec.PodMetadata
	if pm == nil {
		return
	}
	meta.Labels = mergeLabels(pm.Labels, meta.Labels)
	if len(pm.Annotations) > 0 {
		meta.Annotations = mergeLabels(pm.Annotations, meta.Annotations)
	}
}

// clonePtr returns a pointer to a copy of *p, nil for nil: the Pod shares nothing with the Cluster.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Shutdown budget: of a Pod's grace period (spec.stopDelay), the instance manager keeps
// shutdownOverhead for what precedes mysqld's stop (a primary gives up its Lease, at most 5 s; the
// HTTP servers close, at most 2 s; client sessions end, at most 5 s) with 3 s to spare, and gives
// mysqld the rest, so the kubelet never has to kill a mysqld that is still flushing.
const (
	shutdownOverhead = 15
	// DefaultStopDelay applies to a Cluster read before the field existed.
	DefaultStopDelay = 180
)

// stopBudget returns the Pod's grace period and the part of it mysqld gets, in seconds.
func stopBudget(c *mysqlv1alpha1.Cluster) (pod int64, mysqld int64) {
	pod = int64(c.Spec.StopDelay)
	if pod == 0 {
		pod = DefaultStopDelay
	}
	return pod, max(pod-shutdownOverhead, 5)
}
