package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// ServiceSelectorType is the role a Service routes to.
// +kubebuilder:validation:Enum=rw;ro;r
type ServiceSelectorType string

const (
	// ServiceSelectorTypeRW routes to the current primary.
	ServiceSelectorTypeRW ServiceSelectorType = "rw"
	// ServiceSelectorTypeRO routes to ready, routable replicas.
	ServiceSelectorTypeRO ServiceSelectorType = "ro"
	// ServiceSelectorTypeR routes to any ready, routable instance.
	ServiceSelectorTypeR ServiceSelectorType = "r"
)

// ServiceUpdateStrategy says how an additional Service's template combines with the role defaults.
// +kubebuilder:validation:Enum=patch;replace
type ServiceUpdateStrategy string

const (
	// ServiceUpdateStrategyPatch merges the template onto the role defaults.
	ServiceUpdateStrategyPatch ServiceUpdateStrategy = "patch"
	// ServiceUpdateStrategyReplace uses the template alone, plus the operator-owned fields.
	ServiceUpdateStrategyReplace ServiceUpdateStrategy = "replace"
)

// ManagedConfiguration holds the objects the operator manages beside the instances.
type ManagedConfiguration struct {
	// Services configures the role Services.
	// +optional
	Services *ManagedServices `json:"services,omitempty"`
}

// ManagedServices configures the default role Services and additional ones.
type ManagedServices struct {
	// DisabledDefaultServices lists default Services not to create; rw cannot be disabled.
	// +kubebuilder:validation:XValidation:rule="!self.exists(s, s == 'rw')",message="the rw Service cannot be disabled"
	// +listType=set
	// +optional
	DisabledDefaultServices []ServiceSelectorType `json:"disabledDefaultServices,omitempty"`

	// Template is merged onto the three default Services.
	// +optional
	Template *ServiceTemplateSpec `json:"template,omitempty"`

	// Additional Services, each rendered as <cluster>-<name> and routed to a role.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Additional []ManagedService `json:"additional,omitempty"`
}

// ManagedService is an additional Service routed to a role.
type ManagedService struct {
	// Name is the suffix of the Service name <cluster>-<name>.
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:XValidation:rule="!(self in ['rw', 'ro', 'r'])",message="additional Service names must not be rw, ro or r: those are the default Services"
	Name string `json:"name"`

	// SelectorType is the role the Service routes to.
	SelectorType ServiceSelectorType `json:"selectorType"`

	// UpdateStrategy: patch merges the template onto the role defaults, replace uses it alone.
	// +kubebuilder:default=patch
	// +optional
	UpdateStrategy ServiceUpdateStrategy `json:"updateStrategy,omitempty"`

	// ServiceTemplate is this Service's template.
	// +optional
	ServiceTemplate ServiceTemplateSpec `json:"serviceTemplate,omitempty"`
}

// ServiceTemplateSpec is the user-customisable part of a Service. Selector, ports and clusterIP
// are always the operator's.
type ServiceTemplateSpec struct {
	// Metadata adds labels and annotations.
	// +optional
	Metadata ServiceTemplateMetadata `json:"metadata,omitempty"`
	// Spec holds the Service fields a user may set.
	// +optional
	Spec ServiceTemplateServiceSpec `json:"spec,omitempty"`
}

// ServiceTemplateMetadata is the metadata a template may add.
type ServiceTemplateMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ServiceTemplateServiceSpec lists the Service spec fields a user may customise.
// +kubebuilder:validation:XValidation:rule="!has(self.healthCheckNodePort) || self.healthCheckNodePort == 0 || (has(self.type) && self.type == 'LoadBalancer' && has(self.externalTrafficPolicy) && self.externalTrafficPolicy == 'Local')",message="healthCheckNodePort may only be set with type LoadBalancer and externalTrafficPolicy Local"
// +kubebuilder:validation:XValidation:rule="!has(self.externalName) || size(self.externalName) == 0 || (has(self.type) && self.type == 'ExternalName')",message="externalName may only be set with type ExternalName"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'ExternalName' || (has(self.externalName) && size(self.externalName) > 0)",message="type ExternalName needs an externalName"
type ServiceTemplateServiceSpec struct {
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer;ExternalName
	// +optional
	Type corev1.ServiceType `json:"type,omitempty"`
	// +kubebuilder:validation:Enum=Cluster;Local
	// +optional
	ExternalTrafficPolicy corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`
	// +kubebuilder:validation:Enum=None;ClientIP
	// +optional
	SessionAffinity corev1.ServiceAffinity `json:"sessionAffinity,omitempty"`
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.all(r, isCIDR(r))",message="loadBalancerSourceRanges must be CIDRs such as 10.0.0.0/8"
	// +optional
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="externalName must be a lower-case DNS name"
	// +optional
	ExternalName string `json:"externalName,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	// +optional
	HealthCheckNodePort int32 `json:"healthCheckNodePort,omitempty"`
}
