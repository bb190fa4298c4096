package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InstanceReplicationStatus is a replica's replication channel as its instance manager last
// reported it to the operator.
type InstanceReplicationStatus struct {
	// Source is the instance the channel replicates from; empty when it is none of the Cluster's.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Source string `json:"source,omitempty"`
	// IOState is Replica_IO_Running: Yes, No or Connecting.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	IOState string `json:"ioState,omitempty"`
	// IORunning and SQLRunning say the receiver and the applier run.
	IORunning  bool `json:"ioRunning"`
	SQLRunning bool `json:"sqlRunning"`
	// LagSeconds is how far the applier trails the source, in seconds; absent when unknown (a
	// thread stopped, the source gone).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9007199254740991
	LagSeconds *int64 `json:"lagSeconds,omitempty"`
	// LagTransactions is how many transactions the receiver got that the applier has not applied
	// yet (Retrieved_Gtid_Set minus gtid_executed); absent when the sets could not be read.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9007199254740991
	LagTransactions *int64 `json:"lagTransactions,omitempty"`
	// LastIOError and LastSQLError are the threads' last errors, shortened.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	LastIOError string `json:"lastIOError,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=512
	LastSQLError string `json:"lastSQLError,omitempty"`
}

// FailoverReadiness is the operator's answer to "would a failover of the primary be safe now?",
// computed from its last look at the instances with the rules a failover follows. It only
// reports: nothing acts on it.
type FailoverReadiness struct {
	// Safe: a failover now would promote Candidate and lose no write the primary acknowledged.
	Safe bool `json:"safe"`
	// Reason is a CamelCase word naming the rule that decided (CandidateReady when safe).
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason"`
	// Message says why, and what would unblock a failover.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Message string `json:"message,omitempty"`
	// Candidate is the replica a failover would promote; empty when none could be.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Candidate string `json:"candidate,omitempty"`
	// LastTransitionTime is when Safe or Reason last changed.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// PendingUpdateKind is what an instance waits for.
// +kubebuilder:validation:Enum=PodSpec;ParameterRestart;InstanceManager
type PendingUpdateKind string

const (
	// PendingPodSpec: the instance's Pod runs an older spec (image, resources, operator image); a
	// rolling update replaces it.
	PendingPodSpec PendingUpdateKind = "PodSpec"
	// PendingParameterRestart: mysqld takes a changed parameter only at its start; the rolling
	// update restarts it.
	PendingParameterRestart PendingUpdateKind = "ParameterRestart"
	// PendingInstanceManager: the instance manager runs another binary than the operator's; it is
	// updated in place.
	PendingInstanceManager PendingUpdateKind = "InstanceManager"
)

// PendingUpdate is one kind of update some instances have not received yet. The Progressing
// condition says what the rolling update does or waits for.
type PendingUpdate struct {
	Kind PendingUpdateKind `json:"kind"`
	// Instances are the instances still waiting, the primary last.
	// +kubebuilder:validation:MaxItems=64
	Instances []string `json:"instances"`
	// Detail is what changes: the parameters for ParameterRestart, the version for
	// InstanceManager.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Detail string `json:"detail,omitempty"`
}
