package v1alpha1

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// Name of the referenced object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="name must be a lower-case DNS subdomain (letters, digits, '-' and '.')"
	Name string `json:"name"`
}

// SecretKeySelector selects one key of a Secret in the same namespace.
type SecretKeySelector struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="a Secret name must be a lower-case DNS subdomain (letters, digits, '-' and '.')"
	Name string `json:"name"`
	// Key within the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",message="a Secret key consists of letters, digits, '-', '_' and '.'"
	Key string `json:"key"`
}

// BackupMethod is how a physical snapshot of an instance is produced.
// +kubebuilder:validation:Enum=clone;xtrabackup
type BackupMethod string

const (
	// BackupMethodClone uses MySQL's CLONE plugin: a recipient mysqld in the backup Job clones the
	// target instance over TLS, then its data directory is streamed to the object store.
	BackupMethodClone BackupMethod = "clone"
	// BackupMethodXtraBackup streams `xtrabackup --backup --stream=xbstream`; it needs Percona images.
	BackupMethodXtraBackup BackupMethod = "xtrabackup"
)

// BackupTarget chooses which instance a backup is taken from.
// +kubebuilder:validation:Enum=primary;prefer-standby
type BackupTarget string

const (
	// BackupTargetPrimary always backs up the current primary.
	BackupTargetPrimary BackupTarget = "primary"
	// BackupTargetPreferStandby backs up the healthy replica with the least lag, else the primary.
	BackupTargetPreferStandby BackupTarget = "prefer-standby"
)

// DeletionPolicy says what happens to a Backup's remote objects when the Backup object is deleted.
// +kubebuilder:validation:Enum=keep;delete
type DeletionPolicy string

const (
	// DeletionPolicyKeep leaves the archive and metadata.json in the object store (the default).
	DeletionPolicyKeep DeletionPolicy = "keep"
	// DeletionPolicyDelete deletes the archive and metadata.json before the Backup object goes away.
	DeletionPolicyDelete DeletionPolicy = "delete"
)

// Condition types shared by the kinds of this API.
const (
	// ConditionReady is true when the object does what its spec asks.
	ConditionReady = "Ready"
	// ConditionProgressing is true while the operator is converging the object.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is true when something needs a user's attention.
	ConditionDegraded = "Degraded"
	// ConditionParametersRefused is True while an instance leaves a parameter of
	// spec.mysql.parameters out of my.cnf (status.parameters.refused says which and why).
	ConditionParametersRefused = "ParametersRefused"
	// ConditionStorageResized is True when every instance's volume has spec.storage.size, False
	// while volumes grow to it or when their StorageClass cannot grow them (the reason says which).
	ConditionStorageResized = "StorageResized"
)
