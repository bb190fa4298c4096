package specs

import (
	corev1 "k8s.io/api/core/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// applyTemplate merges the whitelisted fields of t onto svc: labels and annotations key by key,
// and each spec field the template sets (type, externalTrafficPolicy, sessionAffinity,
// loadBalancerSourceRanges, externalName, healthCheckNodePort). Nothing else can be customised.
func applyTemplate(svc *corev1.Service, t *mysqlv1alpha1.ServiceTemplateSpec) {
	if t == nil {
		return
	}
	svc.Labels = mergeLabels(svc.Labels, t.Metadata.Labels)
	if len(t.Metadata.Annotations) > 0 {
		svc.Annotations = mergeLabels(svc.Annotations, t.Metadata.Annotations)
	}
	s := t.Spec
	if s.Type != "" {
		svc.Spec.Type = s.Type
	}
	if s.ExternalTrafficPolicy != "" {
		svc.Spec.ExternalTrafficPolicy = s.ExternalTrafficPolicy
	}
	if s.SessionAffinity != "" {
		svc.Spec.SessionAffinity = s.SessionAffinity
	}
	if s.LoadBalancerSourceRanges != nil {
		svc.Spec.LoadBalancerSourceRanges = append([]string(nil), s.LoadBalancerSourceRanges...)
	}
	if s.ExternalName != "" {
		svc.Spec.ExternalName = s.ExternalName
	}
	if s.HealthCheckNodePort != 0 {
		svc.Spec.HealthCheckNodePort = s.HealthCheckNodePort
	}
}
