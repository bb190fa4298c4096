package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// The scheduling fields of a Cluster: where its instance Pods may run and how they spread. They
// are copied into every instance Pod's spec, so a change rolls the Cluster as any other Pod spec
// change does (replicas first, the primary last, per primaryUpdateStrategy). The Kubernetes types
// are mirrored rather than embedded where they hold integers, so that each integer carries the
// bound the operator's decoder needs (see schema_bounds.go).

// AffinityConfiguration places the instances: anti-affinity between the Cluster's own instances,
// the nodes they may use, and the taints they tolerate.
type AffinityConfiguration struct {
	// EnablePodAntiAffinity keeps the Cluster's instances apart, on distinct values of
	// topologyKey (by default distinct nodes).
	// +kubebuilder:default=true
	// +optional
	EnablePodAntiAffinity *bool `json:"enablePodAntiAffinity,omitempty"`

	// TopologyKey is the node label whose values the instances are kept apart on:
	// kubernetes.io/hostname (nodes), topology.kubernetes.io/zone (zones) or any other.
	// +kubebuilder:default="kubernetes.io/hostname"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$')",message="topologyKey must be a label key such as kubernetes.io/hostname"
	// +optional
	TopologyKey string `json:"topologyKey,omitempty"`

	// PodAntiAffinityType is preferred (the scheduler keeps instances apart when it can, and
	// places them together when it cannot) or required (an instance that cannot be kept apart
	// stays Pending: a Cluster of three instances then needs three values of topologyKey).
	// +kubebuilder:default=preferred
	// +optional
	PodAntiAffinityType PodAntiAffinityType `json:"podAntiAffinityType,omitempty"`

	// NodeSelector restricts the instances to nodes carrying every one of these labels.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations let the instances run on nodes with matching taints (nodes dedicated to
	// databases, say).
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tolerations []Toleration `json:"tolerations,omitempty"`
}

// PodAntiAffinityType is how strictly the instances are kept apart.
// +kubebuilder:validation:Enum=preferred;required
type PodAntiAffinityType string

const (
	// PodAntiAffinityPreferred keeps instances apart when the scheduler can.
	PodAntiAffinityPreferred PodAntiAffinityType = "preferred"
	// PodAntiAffinityRequired never places two instances on one value of the topology key.
	PodAntiAffinityRequired PodAntiAffinityType = "required"
)

// Toleration is a corev1.Toleration whose tolerationSeconds is bounded. The rules are the ones the
// API server applies to a Pod's tolerations, checked here so that a Cluster is refused at once
// rather than its Pods later.
// +kubebuilder:validation:XValidation:rule="(has(self.key) && size(self.key) > 0) || (has(self.operator) && self.operator == 'Exists')",message="a toleration without a key must use operator Exists"
// +kubebuilder:validation:XValidation:rule="!has(self.operator) || self.operator != 'Exists' || !has(self.value) || size(self.value) == 0",message="a toleration with operator Exists must not have a value"
// +kubebuilder:validation:XValidation:rule="!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",message="tolerationSeconds applies only to effect NoExecute"
// +kubebuilder:validation:XValidation:rule="!has(self.value) || self.value.matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$')",message="a toleration value must be a label value: letters, digits, '-', '_' or '.', beginning and ending with a letter or digit"
type Toleration struct {
	// Key is the taint key tolerated; empty with operator Exists tolerates every taint.
	// +kubebuilder:validation:MaxLength=316
	// +optional
	Key string `json:"key,omitempty"`
	// Operator is Equal (the default: key and value match) or Exists (the key matches).
	// +kubebuilder:validation:Enum=Equal;Exists
	// +optional
	Operator corev1.TolerationOperator `json:"operator,omitempty"`
	// Value is the taint value tolerated, with operator Equal.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Value string `json:"value,omitempty"`
	// Effect is the taint effect tolerated; empty tolerates every effect.
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	// +optional
	Effect corev1.TaintEffect `json:"effect,omitempty"`
	// TolerationSeconds is how long, with effect NoExecute, an instance stays on a node after
	// the taint appears; unset stays for ever.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9007199254740991
	// +optional
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// TopologySpreadConstraint spreads the Cluster's instances over the values of a node label. It is
// a corev1.TopologySpreadConstraint whose label selector is always the Cluster's own instances
// (what spreading a Cluster means), with bounded integers.
// +kubebuilder:validation:XValidation:rule="!has(self.minDomains) || self.whenUnsatisfiable == 'DoNotSchedule'",message="minDomains applies only with whenUnsatisfiable DoNotSchedule"
type TopologySpreadConstraint struct {
	// MaxSkew is the largest difference allowed between the number of instances on two values
	// of topologyKey.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	MaxSkew int32 `json:"maxSkew"`
	// TopologyKey is the node label spread over, such as topology.kubernetes.io/zone.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$')",message="topologyKey must be a label key such as topology.kubernetes.io/zone"
	TopologyKey string `json:"topologyKey"`
	// WhenUnsatisfiable is DoNotSchedule (an instance that would break maxSkew stays Pending)
	// or ScheduleAnyway (the skew is only a preference).
	// +kubebuilder:validation:Enum=DoNotSchedule;ScheduleAnyway
	WhenUnsatisfiable corev1.UnsatisfiableConstraintAction `json:"whenUnsatisfiable"`
	// MinDomains is the least number of values of topologyKey counted, with DoNotSchedule.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	MinDomains *int32 `json:"minDomains,omitempty"`
	// NodeAffinityPolicy says whether the instances' nodeSelector narrows the values counted
	// (Honor, the default) or not (Ignore).
	// +kubebuilder:validation:Enum=Honor;Ignore
	// +optional
	NodeAffinityPolicy *corev1.NodeInclusionPolicy `json:"nodeAffinityPolicy,omitempty"`
	// NodeTaintsPolicy says whether nodes with taints the instances do not tolerate are counted
	// (Ignore, the default) or left out (Honor).
	// +kubebuilder:validation:Enum=Honor;Ignore
	// +optional
	NodeTaintsPolicy *corev1.NodeInclusionPolicy `json:"nodeTaintsPolicy,omitempty"`
}

// PodMetadata are labels and annotations every instance Pod carries beside the operator's own
// (for a cost-allocation label, a service mesh or a backup tool's annotation, say). Keys under
// the operator's prefix are refused: those the operator sets always win. The syntax of keys and
// values is the API server's to check when it creates a Pod (a rule over every value of a map
// costs more than the Cluster schema's CEL budget allows); the operator reports a Pod it cannot
// create as a Warning Event.
type PodMetadata struct {
	// Labels added to every instance Pod.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="!self.exists(k, k.startsWith('mysql.cloudnative-mysql.io/'))",message="podMetadata.labels must not use the operator's prefix mysql.cloudnative-mysql.io/"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations added to every instance Pod.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="!self.exists(k, k.startsWith('mysql.cloudnative-mysql.io/'))",message="podMetadata.annotations must not use the operator's prefix mysql.cloudnative-mysql.io/"
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}
