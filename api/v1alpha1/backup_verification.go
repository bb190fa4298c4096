package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackupVerification proves that backups restore: the newest completed backup is restored, with
// the binlog archive replayed to its newest archived event when archiving runs, into a throwaway
// Job with scratch storage; mysqld is started on it, gtid_executed compared with metadata.json
// and the archive, CHECK TABLE run on every table (a sample when over checkTableBudget) and rows
// counted. Nothing touches the live instances; a failed verification never deletes or changes a
// backup. One verification per Cluster runs at a time.
// +kubebuilder:validation:XValidation:rule="has(self.schedule) || has(self.everyBackups)",message="verification needs a schedule, everyBackups, or both"
type BackupVerification struct {
	// Schedule is a six-field cron expression with seconds (as a ScheduledBackup's), in UTC: at
	// each slot the newest completed backup is verified.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^\\\\s*\\\\S+(\\\\s+\\\\S+){5}\\\\s*$')",message="schedule must have six fields: second minute hour day-of-month month day-of-week"
	// +optional
	Schedule string `json:"schedule,omitempty"`

	// EveryBackups verifies the newest completed backup once this many backups completed after
	// the one verified last (1: every backup).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	EveryBackups *int32 `json:"everyBackups,omitempty"`

	// Timeout bounds a verification Job from its start; past it the verification fails with
	// reason VerificationTimedOut. 2h by default, at least 1m.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+h)?([0-9]+m)?([0-9]+s)?$') && size(self) > 0",message="timeout must be a duration written with h, m and s, such as 2h"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+h)?([0-9]+m)?([0-9]+s)?$') || size(self) == 0 || duration(self) >= duration('1m')",message="timeout must be at least 1m"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// CheckTableBudget bounds the CHECK TABLE and row count phase: tables are checked in an order
	// that starts at a different table each time, until the budget is spent; the rest is left
	// for later verifications and the result says how many were checked. 10m by default.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+h)?([0-9]+m)?([0-9]+s)?$') && size(self) > 0",message="checkTableBudget must be a duration written with h, m and s, such as 10m"
	// +optional
	CheckTableBudget *metav1.Duration `json:"checkTableBudget,omitempty"`

	// Resources of the verification container, which runs mysqld on the restored data.
	// Requests of 100m CPU and 512Mi memory when unset.
	// +optional
	Resources *ResourceRequirements `json:"resources,omitempty"`

	// Storage is the scratch volume the backup is restored into: an emptyDir on the node when
	// unset; with a size, a generic ephemeral volume of that size (and storage class), created
	// with the Pod and deleted with it.
	// +optional
	Storage *VerificationStorage `json:"storage,omitempty"`
}

// VerificationStorage is the scratch volume of a verification.
type VerificationStorage struct {
	// Size of the ephemeral volume: room for the unpacked backup and the downloaded binlogs.
	// +kubebuilder:validation:XValidation:rule="type(self) == int || isQuantity(self)",message="size must be a quantity such as 20Gi"
	Size resource.Quantity `json:"size"`
	// StorageClassName of the ephemeral volume; the default class when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// BackupVerificationStatus is the last verification of a Backup, on its status.
type BackupVerificationStatus struct {
	// JobName is the verification Job.
	JobName string `json:"jobName"`
	// StartedAt and CompletedAt bound the Job.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
	// Passed is true when every step succeeded.
	Passed bool `json:"passed"`
	// Reason names the step that failed (the Verified condition's reason).
	// +optional
	Reason string `json:"reason,omitempty"`
	// GTIDExecuted of the restored server once the archive was replayed.
	// +optional
	GTIDExecuted string `json:"gtidExecuted,omitempty"`
	// ReplayedTransactions from ReplayedSegments of the binlog archive.
	// +optional
	// +kubebuilder:validation:Maximum=9007199254740991
	ReplayedTransactions int64 `json:"replayedTransactions,omitempty"`
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	ReplayedSegments int32 `json:"replayedSegments,omitempty"`
	// Tables of the restored data, TablesChecked of them by CHECK TABLE within the budget.
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	Tables int32 `json:"tables,omitempty"`
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	TablesChecked int32 `json:"tablesChecked,omitempty"`
	// Rows counted in the checked tables.
	// +optional
	// +kubebuilder:validation:Maximum=9007199254740991
	Rows int64 `json:"rows,omitempty"`
}

// LastVerifiedBackup is the Cluster's last restore verification, passed or failed.
type LastVerifiedBackup struct {
	// Name of the Backup verified.
	Name string `json:"name"`
	// JobName is the verification Job.
	JobName string `json:"jobName"`
	// Passed is true when the backup restored and every check passed.
	Passed bool `json:"passed"`
	// Reason of the Backup's Verified condition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// StartedAt and CompletedAt bound the Job.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
	// Due is the instant that made this verification due: the schedule's slot, or the completion
	// of the backup that reached everyBackups. The schedule's next slot is counted from it (or
	// from StartedAt when later).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	Due *metav1.Time `json:"due,omitempty"`
	// BackupCompletedAt is when the verified backup completed: the backups completed after it
	// count toward everyBackups.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	BackupCompletedAt *metav1.Time `json:"backupCompletedAt,omitempty"`
	// LastPassedAt is when a verification of this Cluster last passed (this one or an earlier).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	LastPassedAt *metav1.Time `json:"lastPassedAt,omitempty"`
}

// Verification condition types and reasons.
const (
	// BackupVerified is on a Backup once a verification of it ended: True with its figures,
	// False with the reason it failed. It never changes the backup's phase or its objects.
	BackupVerified = "Verified"
	// ClusterBackupsVerified is on a Cluster with spec.backup.verification: the result of its
	// last verification.
	ClusterBackupsVerified = "BackupsVerified"

	// ReasonVerificationPassed: the backup restored and every check passed.
	ReasonVerificationPassed = "Restorable"
	// ReasonVerificationPending: no verification ended yet (Cluster condition, Unknown).
	ReasonVerificationPending = "NotVerifiedYet"
	// ReasonVerificationUnreadable: the object store refused or failed a read, or an object is
	// missing.
	ReasonVerificationUnreadable = "BackupUnreadable"
	// ReasonVerificationChecksum: the archive's bytes differ from the size or sha256
	// metadata.json records.
	ReasonVerificationChecksum = "ChecksumMismatch"
	// ReasonVerificationCorrupt: the archive does not decompress or unpack.
	ReasonVerificationCorrupt = "ArchiveCorrupt"
	// ReasonVerificationGTID: the restored gtid_executed is not the one metadata.json records, or
	// the replay did not end at the archive's end.
	ReasonVerificationGTID = "GTIDMismatch"
	// ReasonVerificationStart: mysqld refused to start on the restored data.
	ReasonVerificationStart = "MysqldRefusedToStart"
	// ReasonVerificationReplay: the binlog archive could not be replayed onto the backup (a gap,
	// a missing or corrupt segment).
	ReasonVerificationReplay = "BinlogReplayFailed"
	// ReasonVerificationTable: CHECK TABLE reported a table corrupt, or mysqld stopped while
	// checking one.
	ReasonVerificationTable = "TableCheckFailed"
	// ReasonVerificationTimedOut: the Job ran past spec.backup.verification.timeout.
	ReasonVerificationTimedOut = "VerificationTimedOut"
	// ReasonVerificationJobFailed: the Job ended without a result (evicted, out of memory, its
	// Pod could not start).
	ReasonVerificationJobFailed = "VerificationJobFailed"
	// ReasonVerificationFailed: any other failure of the verification.
	ReasonVerificationFailed = "VerificationFailed"
)

// VerificationLabel is on a verification Job and its Pod: the Backup it verifies.
const VerificationLabel = labelPrefix + "verification"

// VerificationDueAnnotation is on a verification Job: the instant that made it due (RFC 3339).
const VerificationDueAnnotation = labelPrefix + "verification-due"
