package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackupOwnerReference says who owns the Backups a ScheduledBackup creates.
// +kubebuilder:validation:Enum=none;self;cluster
type BackupOwnerReference string

const (
	// BackupOwnerReferenceNone leaves generated Backups standalone.
	BackupOwnerReferenceNone BackupOwnerReference = "none"
	// BackupOwnerReferenceSelf makes the ScheduledBackup own them: deleting it collects them.
	BackupOwnerReferenceSelf BackupOwnerReference = "self"
	// BackupOwnerReferenceCluster makes the Cluster own them.
	BackupOwnerReferenceCluster BackupOwnerReference = "cluster"
)

// ScheduledBackupSpec creates ordinary Backups on a six-field cron cadence.
type ScheduledBackupSpec struct {
	// Schedule is a six-field cron expression with seconds:
	// second minute hour day-of-month month day-of-week, evaluated in UTC.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^\\\\s*\\\\S+(\\\\s+\\\\S+){5}\\\\s*$')",message="schedule must have six fields: second minute hour day-of-month month day-of-week; a five-field Unix cron is rejected because the leading seconds field is required"
	Schedule string `json:"schedule"`

	// Cluster the Backups are taken of.
	Cluster LocalObjectReference `json:"cluster"`

	// Suspend stops new Backups; existing ones are left alone.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// Immediate creates one Backup on the first reconcile, besides the cron cadence.
	// +kubebuilder:default=false
	// +optional
	Immediate *bool `json:"immediate,omitempty"`

	// SkipImmediately skips the run that is due right away when the schedule is created or
	// unsuspended. The operator consumes it: it records status.lastSkipped and resets it to false.
	// Unset, it is the operator's --schedule-skip-immediately (false unless set) until the schedule
	// first runs or skips a Backup, and false afterwards.
	// +optional
	SkipImmediately *bool `json:"skipImmediately,omitempty"`

	// BackupOwnerReference says who owns generated Backups: none, self or cluster. It changes only
	// Kubernetes garbage collection, never what happens to remote objects.
	// +kubebuilder:default=none
	// +optional
	BackupOwnerReference BackupOwnerReference `json:"backupOwnerReference,omitempty"`

	// Method, Target, Online, Timeout and DeletionPolicy are copied into every generated Backup.
	// +kubebuilder:default=clone
	// +optional
	Method BackupMethod `json:"method,omitempty"`
	// +kubebuilder:default=prefer-standby
	// +optional
	Target BackupTarget `json:"target,omitempty"`
	// +kubebuilder:default=true
	// +optional
	Online *bool `json:"online,omitempty"`
	// +kubebuilder:default="6h"
	// +optional
	// +kubebuilder:validation:XValidation:rule="size(self) > 0 && self.matches('^([0-9]{1,3}h)?([0-9]{1,5}m)?([0-9]{1,7}s)?$')",message="timeout must be a whole number of seconds written with h, m and s, such as 6h, 90m or 1h30m0s (no ms, no fractions, no sign)"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,3}h)?([0-9]{1,5}m)?([0-9]{1,7}s)?$') || size(self) == 0 || (duration(self) >= duration('1s') && duration(self) <= duration('720h'))",message="timeout must be between 1s and 720h"
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// SuccessfulBackupsHistoryLimit keeps at most this many completed Backup objects of this
	// schedule; unset keeps all. Pruning a Backup object never deletes remote data.
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	SuccessfulBackupsHistoryLimit *int32 `json:"successfulBackupsHistoryLimit,omitempty"`

	// FailedBackupsHistoryLimit keeps at most this many failed Backup objects of this schedule.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	FailedBackupsHistoryLimit *int32 `json:"failedBackupsHistoryLimit,omitempty"`
}

// ScheduledBackupStatus records scheduler progress.
type ScheduledBackupStatus struct {
	// LastCheckTime is the last time the schedule was evaluated.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	LastCheckTime *metav1.Time `json:"lastCheckTime,omitempty"`

	// LastScheduleTime is the last slot that produced or adopted a Backup.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// NextScheduleTime is the next expected slot.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// LastSkipped is the last slot or moment deliberately not run (consumed skipImmediately, or a
	// slot whose name a foreign Backup holds); the later of it and LastScheduleTime is the cron
	// reference.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	LastSkipped *metav1.Time `json:"lastSkipped,omitempty"`

	// ObservedGeneration is the spec generation the status describes.
	// +optional
	// +kubebuilder:validation:Maximum=9007199254740991
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready (the schedule parses and runs), Degraded (recent Backups failed).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ScheduledBackup creates Backups of a Cluster on a cron schedule.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mysqlsb
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster.name`
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Last Backup",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextScheduleTime`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 48",message="a ScheduledBackup name is at most 48 characters, so <name>-<YYYYMMDDHHMMSS> child names and label values stay valid"
type ScheduledBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ScheduledBackupSpec   `json:"spec"`
	Status ScheduledBackupStatus `json:"status,omitempty"`
}

// ScheduledBackupList is a list of ScheduledBackups.
// +kubebuilder:object:root=true
type ScheduledBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ScheduledBackup `json:"items"`
	// Undecodable names the items a decoded list left out because they do not decode
	// (list_decode.go); never serialized. A reader that must see every object calls Complete.
	Undecodable []string `json:"-"`
}

func init() {
	SchemeBuilder.Register(&ScheduledBackup{}, &ScheduledBackupList{})
}
