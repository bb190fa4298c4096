package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// The records the failover keeps in the Cluster status: what a target must hold, a person's
// acceptance of data loss, and the proof that a failing primary's writes are on a replica.

// PrimaryCatchUp is the GTID set one target primary must have executed before it accepts writes.
type PrimaryCatchUp struct {
	// Instance is the target it applies to; a record naming another instance does not count.
	Instance string `json:"instance"`
	// TargetPrimaryTimestamp is status.targetPrimaryTimestamp of the primary change it was
	// recorded for: a record left by an earlier change to the same instance does not count.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	TargetPrimaryTimestamp *metav1.Time `json:"targetPrimaryTimestamp,omitempty"`
	// GTIDSet is the set, in MySQL's text form ("" for none).
	// +optional
	GTIDSet string `json:"gtidSet,omitempty"`
}

// DataLossAcceptance is a person's acceptance of a failover past the commits a failing primary
// acknowledged alone after a semi-sync fallback (`kubectl cloudnative-mysql promote CLUSTER
// INSTANCE --accept-data-loss`). It counts for one failure only: while FormerPrimary is
// status.currentPrimary, status.primaryFailingSince is still FailingSince, and it has not been acted
// on (PromotedAt unset); a primary that recovers clears it. Once the failover names Instance, Lost
// and PromotedAt say what was given up; it then stays as the record and counts no more.
type DataLossAcceptance struct {
	// FormerPrimary is the failing primary whose acknowledged-alone commits are given up.
	FormerPrimary string `json:"formerPrimary"`
	// FailingSince is status.primaryFailingSince when it was given: the failure it is for.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	FailingSince metav1.Time `json:"failingSince"`
	// Instance is the replica to promote.
	Instance string `json:"instance"`
	// AcceptedAt is when it was requested.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	AcceptedAt metav1.Time `json:"acceptedAt"`
	// Lost is what the operator could tell of the loss when it named Instance the target: the GTID
	// set FormerPrimary fell back at (its commits after it may be lost) and what Instance holds.
	// +optional
	Lost string `json:"lost,omitempty"`
	// PromotedAt is when the failover named Instance the target primary.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	PromotedAt *metav1.Time `json:"promotedAt,omitempty"`
}

// FallbackCaughtUp is the operator's proof, for one failure of FormerPrimary, that the commits it
// may have acknowledged alone after its semi-sync fallback (the Lease's record, FellBackAt) are
// all in GTIDSet, its gtid_executed as it reported it while read-only. A failover whose candidate
// holds GTIDSet loses none of them, even once the old primary no longer answers.
type FallbackCaughtUp struct {
	FormerPrimary string `json:"formerPrimary"`
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	FailingSince metav1.Time `json:"failingSince"`
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	FellBackAt metav1.Time `json:"fellBackAt"`
	// +optional
	GTIDSet string `json:"gtidSet,omitempty"`
}

// PrimaryRestart is a planned restart of the primary's Pod on its volume: Instance's Pod PodUID
// was deleted at RequestedAt to be recreated with the new spec.
type PrimaryRestart struct {
	// Instance is the primary being restarted.
	// +kubebuilder:validation:MaxLength=253
	Instance string `json:"instance"`
	// PodUID is the UID of the Pod that was deleted: a Pod with another UID is the restarted one.
	// +kubebuilder:validation:MaxLength=128
	PodUID string `json:"podUID"`
	// RequestedAt is when the Pod was deleted.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	RequestedAt metav1.Time `json:"requestedAt"`
}
