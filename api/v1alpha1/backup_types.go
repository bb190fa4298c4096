package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackupSpec is a request for one physical backup of a Cluster to its object store. Everything but
// the deletion policy is fixed once the Backup exists.
type BackupSpec struct {
	// Cluster to back up; its spec.backup.objectStore says where the backup goes.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cluster is immutable"
	Cluster LocalObjectReference `json:"cluster"`

	// Method produces the physical snapshot: clone (MySQL CLONE plugin) or xtrabackup (Percona).
	// +kubebuilder:default=clone
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="method is immutable"
	Method BackupMethod `json:"method,omitempty"`

	// Target chooses the instance: prefer-standby takes the healthy replica with the least lag and
	// falls back to the primary; primary always takes the primary.
	// +kubebuilder:default=prefer-standby
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="target is immutable"
	Target BackupTarget `json:"target,omitempty"`

	// Online backups run while the target keeps applying changes. An offline backup (false) is
	// taken from a replica whose replication applier is stopped for the duration, so the snapshot
	// is a quiescent point; it never stops a primary, and fails when no replica is healthy.
	// +kubebuilder:default=true
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="online is immutable"
	Online *bool `json:"online,omitempty"`

	// Timeout bounds the backup from the start of its Job; a Backup still running after it is
	// failed. A Backup queued behind another backup of its Cluster waits without it; one that
	// finds no instance to back up is failed once it has waited that long since its creation. It is a whole
	// number of seconds from 1s to 720h written with h, m and s (6h, 90m, 1h30m0s): the Job's
	// activeDeadlineSeconds counts whole seconds.
	// +kubebuilder:default="6h"
	// +optional
	// +kubebuilder:validation:XValidation:rule="size(self) > 0 && self.matches('^([0-9]{1,3}h)?([0-9]{1,5}m)?([0-9]{1,7}s)?$')",message="timeout must be a whole number of seconds written with h, m and s, such as 6h, 90m or 1h30m0s (no ms, no fractions, no sign)"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,3}h)?([0-9]{1,5}m)?([0-9]{1,7}s)?$') || size(self) == 0 || (duration(self) >= duration('1s') && duration(self) <= duration('720h'))",message="timeout must be between 1s and 720h"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="timeout is immutable"
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// DeletionPolicy says what deleting this Backup object does to its remote objects; when empty
	// the Cluster's spec.backup.deletionPolicy applies, and keep when that is empty too. With
	// delete the Backup carries a finalizer, and its deletion waits until its directory is deleted
	// from the object store; it is refused while a Cluster's bootstrap.recovery names the Backup.
	// The annotation mysql.cloudnative-mysql.io/bypass-remote-cleanup=true lets it go without
	// deleting.
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// BackupPhase is where a Backup is in its life. completed, failed and superseded are final.
// +kubebuilder:validation:Enum=pending;running;completed;failed;superseded
type BackupPhase string

const (
	// BackupPhasePending: accepted, no Job running yet.
	BackupPhasePending BackupPhase = "pending"
	// BackupPhaseRunning: the backup Job is running.
	BackupPhaseRunning BackupPhase = "running"
	// BackupPhaseCompleted: the archive and metadata.json are in the object store, checksum verified.
	BackupPhaseCompleted BackupPhase = "completed"
	// BackupPhaseFailed: the backup ended without a usable archive; Error says why.
	BackupPhaseFailed BackupPhase = "failed"
	// BackupPhaseSuperseded: a Backup of a ScheduledBackup that waited for another backup of its
	// Cluster while a newer Backup of the same schedule was created; only the newest runs. It
	// never started.
	BackupPhaseSuperseded BackupPhase = "superseded"
)

// BackupStatus is the observed state of a Backup.
type BackupStatus struct {
	// Phase: pending, running, completed or failed.
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`

	// InstanceName is the instance the backup was taken from.
	// +optional
	InstanceName string `json:"instanceName,omitempty"`

	// JobName is the backup Job.
	// +optional
	JobName string `json:"jobName,omitempty"`

	// BackupID identifies this backup's directory in the object store.
	// +optional
	BackupID string `json:"backupId,omitempty"`

	// Endpoint and Bucket recorded when the backup ran, so cleanup finds the objects even if the
	// Cluster's object store configuration changed since.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// +optional
	Bucket string `json:"bucket,omitempty"`

	// DestinationPath is the key prefix <path>/<cluster>/<backup-name>/<backup-id>/.
	// +optional
	DestinationPath string `json:"destinationPath,omitempty"`

	// ObjectStore is the Cluster's spec.backup.objectStore as it was when the destination was
	// chosen: the Secret references, never their values. Remote cleanup reads the credentials
	// through it, so deleting the Backup still cleans up after its Cluster is gone, as long as
	// those Secrets exist.
	// +optional
	ObjectStore *ObjectStoreConfiguration `json:"objectStore,omitempty"`

	// Checksum is the sha256 of the archive, "sha256:<hex>".
	// +optional
	Checksum string `json:"checksum,omitempty"`

	// Size of the archive in bytes.
	// +optional
	// +kubebuilder:validation:Maximum=9007199254740991
	Size int64 `json:"size,omitempty"`

	// GTIDExecuted is the GTID set the backup contains.
	// +optional
	GTIDExecuted string `json:"gtidExecuted,omitempty"`

	// BinlogFile and BinlogPosition are the binary log coordinates of the snapshot.
	// +optional
	BinlogFile string `json:"binlogFile,omitempty"`
	// +optional
	// +kubebuilder:validation:Maximum=9007199254740991
	BinlogPosition int64 `json:"binlogPosition,omitempty"`

	// ServerVersion of the instance backed up.
	// +optional
	ServerVersion string `json:"serverVersion,omitempty"`

	// StartedAt and CompletedAt bound the backup.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// Error says why a failed backup failed.
	// +optional
	Error string `json:"error,omitempty"`

	// Verification is the last restore verification of this backup (spec.backup.verification of
	// its Cluster); the Verified condition says whether it passed.
	// +optional
	Verification *BackupVerificationStatus `json:"verification,omitempty"`

	// Conditions record what happened to the artifacts after completion (expired by retention,
	// remote cleanup failures) and whether the backup was verified to restore (Verified).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Backup is one physical backup of a Cluster, streamed to an S3-compatible object store.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mysqlbackup
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster.name`
// +kubebuilder:printcolumn:name="Method",type=string,JSONPath=`.spec.method`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Instance",type=string,JSONPath=`.status.instanceName`
// +kubebuilder:printcolumn:name="Artifacts",type=string,JSONPath=`.status.conditions[?(@.type=="ArtifactsAvailable")].reason`
// +kubebuilder:printcolumn:name="Verified",type=string,JSONPath=`.status.conditions[?(@.type=="Verified")].reason`
// +kubebuilder:printcolumn:name="Error",type=string,JSONPath=`.status.error`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="a Backup name is at most 63 characters, so its Job name and labels stay valid"
// +kubebuilder:validation:XValidation:rule="self.metadata.name != 'binlogs'",message="a Backup cannot be named binlogs: the object store keeps archived binlogs under <cluster>/binlogs/"
type Backup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BackupSpec   `json:"spec"`
	Status BackupStatus `json:"status,omitempty"`
}

// BackupList is a list of Backups.
// +kubebuilder:object:root=true
type BackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Backup `json:"items"`
	// Undecodable names the items a decoded list left out because they do not decode
	// (list_decode.go); never serialized. A reader that must see every object calls Complete.
	Undecodable []string `json:"-"`
}

func init() {
	SchemeBuilder.Register(&Backup{}, &BackupList{})
}
