package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultFailureAlertAfter is spec.backup.failureAlertAfter when it is not set.
const DefaultFailureAlertAfter = 26 * time.Hour

// FailureAlertAfterOrDefault returns spec.backup.failureAlertAfter, or DefaultFailureAlertAfter.
func (b *BackupConfiguration) FailureAlertAfterOrDefault() time.Duration {
	if b == nil || b.FailureAlertAfter == nil || b.FailureAlertAfter.Duration <= 0 {
		return DefaultFailureAlertAfter
	}
	return b.FailureAlertAfter.Duration
}

// ConditionBackupsHealthy is the Cluster condition that says whether the Cluster is protected by
// recent backups.
const ConditionBackupsHealthy = "BackupsHealthy"

// BackupsStatus is a Cluster's protection by backups, written by the operator.
type BackupsStatus struct {
	// LastSuccessful is the Backup of this Cluster that completed last.
	// +optional
	LastSuccessful *SuccessfulBackupRecord `json:"lastSuccessful,omitempty"`
	// LastFailed is the Backup of this Cluster that failed last.
	// +optional
	LastFailed *FailedBackupRecord `json:"lastFailed,omitempty"`
	// Restorable is how many complete backups (metadata.json written) the Cluster's location
	// holds, and RestorableBytes their size, as the object store listed them at ListedAt.
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	Restorable int32 `json:"restorable,omitempty"`
	// +optional
	// +kubebuilder:validation:Maximum=9007199254740991
	RestorableBytes int64 `json:"restorableBytes,omitempty"`
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	ListedAt *metav1.Time `json:"listedAt,omitempty"`
	// FirstRecoverablePoint is the oldest instant a recovery can reach: the start of the
	// archive's recoverable window when binlogs are archived, else the end of the oldest complete
	// backup of the last successful ones recorded.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	FirstRecoverablePoint *metav1.Time `json:"firstRecoverablePoint,omitempty"`
	// NextScheduled is the earliest next run of the ScheduledBackups of this Cluster that are not
	// suspended.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	NextScheduled *metav1.Time `json:"nextScheduled,omitempty"`
	// CriticalAt is when BackupsHealthy turns False with NoSuccessfulBackup if no backup
	// succeeds before: the last success (or the Cluster's creation) plus failureAlertAfter.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	CriticalAt *metav1.Time `json:"criticalAt,omitempty"`
}

// SuccessfulBackupRecord names a completed Backup and what it holds.
type SuccessfulBackupRecord struct {
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
	// +optional
	// +kubebuilder:validation:Maximum=9007199254740991
	Size int64 `json:"size,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	GTIDExecuted string `json:"gtidExecuted,omitempty"`
	// +optional
	Method BackupMethod `json:"method,omitempty"`
}

// FailedBackupRecord names a failed Backup and why it failed.
type FailedBackupRecord struct {
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Reason is the Backup's error.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Reason string `json:"reason,omitempty"`
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	At *metav1.Time `json:"at,omitempty"`
}
