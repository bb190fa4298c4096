package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterStatus is the observed state of a Cluster.
type ClusterStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	// +kubebuilder:validation:Maximum=9007199254740991
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Instances is the number of instance Pods that exist.
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	Instances int32 `json:"instances,omitempty"`

	// ReadyInstances is the number of instance Pods that are ready.
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	ReadyInstances int32 `json:"readyInstances,omitempty"`

	// LatestGeneratedNode is the highest instance serial ever used; serials are never reused.
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	LatestGeneratedNode int32 `json:"latestGeneratedNode,omitempty"`

	// CurrentPrimary is the instance currently accepted as primary.
	// +optional
	CurrentPrimary string `json:"currentPrimary,omitempty"`

	// CurrentPrimaryTimestamp is when CurrentPrimary became primary.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	CurrentPrimaryTimestamp *metav1.Time `json:"currentPrimaryTimestamp,omitempty"`

	// TargetPrimary is the desired primary; instances converge to it. Setting it to a replica's
	// name requests a switchover.
	// +optional
	TargetPrimary string `json:"targetPrimary,omitempty"`

	// TargetPrimaryTimestamp is when TargetPrimary was last changed.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	TargetPrimaryTimestamp *metav1.Time `json:"targetPrimaryTimestamp,omitempty"`

	// TargetPrimaryCatchUp is what the target of a primary change must have executed before it
	// accepts writes, as the operator recorded it: the old primary's final GTID set and what the
	// other replicas received from it. A target that cannot read the old primary itself promotes
	// only once this names it, and only after executing the set.
	// +optional
	TargetPrimaryCatchUp *PrimaryCatchUp `json:"targetPrimaryCatchUp,omitempty"`

	// PrimaryFailingSince is when the current primary was first seen unhealthy; empty while healthy.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	PrimaryFailingSince *metav1.Time `json:"primaryFailingSince,omitempty"`

	// FailingPrimary is the instance that was the primary when PrimaryFailingSince was recorded;
	// empty while healthy. A current primary other than it was promoted by the failover that
	// replaced it.
	// +optional
	FailingPrimary string `json:"failingPrimary,omitempty"`

	// FallbackCaughtUp records what the failing primary had executed, seen read-only after its
	// semi-sync fallback: a candidate holding it loses nothing the primary acknowledged alone.
	// +optional
	FallbackCaughtUp *FallbackCaughtUp `json:"fallbackCaughtUp,omitempty"`

	// DataLossAccepted is a person's acceptance of a failover past acknowledged commits the
	// failing primary may hold alone, and, once acted on, what was lost.
	// +optional
	DataLossAccepted *DataLossAcceptance `json:"dataLossAccepted,omitempty"`

	// DivergedInstances have a GTID set not contained in the primary's; they stay read-only and
	// out of service until a human decides.
	// +optional
	DivergedInstances []string `json:"divergedInstances,omitempty"`

	// Parameters says what became of spec.mysql.parameters on the instances that applied the
	// current spec: those whose new value waits for a restart, and those refused, with the reason.
	// +optional
	Parameters *ParametersStatus `json:"parameters,omitempty"`

	// PrimaryRestart records the in-place restart of the primary's Pod that a rolling update with
	// primaryUpdateMethod restart started: no failover starts while it lasts, up to a bound.
	// +optional
	PrimaryRestart *PrimaryRestart `json:"primaryRestart,omitempty"`

	// FencedInstances are out of every routing Service and held read-only.
	// +optional
	FencedInstances []string `json:"fencedInstances,omitempty"`

	// GTIDExecutedByInstance is the last gtid_executed each instance reported.
	// +optional
	GTIDExecutedByInstance map[string]string `json:"gtidExecutedByInstance,omitempty"`

	// InstanceManagers are the instance managers' binaries as each instance last reported them;
	// a new operator updates them in place to its own.
	// +optional
	InstanceManagers map[string]InstanceManagerStatus `json:"instanceManagers,omitempty"`

	// SemiSync is the primary's observed semi-sync state.
	// +optional
	SemiSync *SemiSyncStatus `json:"semiSync,omitempty"`

	// InstanceReplication is each replica's replication channel as it last reported it; an
	// instance that did not answer the operator's last look is left out.
	// +optional
	InstanceReplication map[string]InstanceReplicationStatus `json:"instanceReplication,omitempty"`

	// FailoverReadiness says whether a failover of the primary would be safe now, and why.
	// +optional
	FailoverReadiness *FailoverReadiness `json:"failoverReadiness,omitempty"`

	// PendingUpdates are the updates some instances have not received yet.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	PendingUpdates []PendingUpdate `json:"pendingUpdates,omitempty"`

	// LastRetentionRunTime is when the last retention pass ran; passes run at most hourly.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	LastRetentionRunTime *metav1.Time `json:"lastRetentionRunTime,omitempty"`

	// Recovery is the base backup the Cluster was restored from (bootstrap.recovery), set once the
	// restore of its first instance was verified.
	// +optional
	Recovery *RecoveryStatus `json:"recovery,omitempty"`

	// BinlogArchive is what the primary's binlog archiver last reported of the archive in
	// spec.backup.objectStore, with the window a point-in-time recovery can reach.
	// +optional
	BinlogArchive *BinlogArchiveStatus `json:"binlogArchive,omitempty"`

	// Backups is the Cluster's protection: its last successful and failed backups, what its
	// location holds, the recoverable window and the next scheduled backup.
	// +optional
	Backups *BackupsStatus `json:"backups,omitempty"`

	// ObjectStoreLocation is whether this Cluster holds its object store location
	// (<path>/<serverName>/ of spec.backup.objectStore): a location belongs to one Cluster
	// incarnation, and only its holder backs up, archives and runs retention there.
	// +optional
	ObjectStoreLocation *ObjectStoreLocationStatus `json:"objectStoreLocation,omitempty"`

	// LastVerifiedBackup is the last restore verification (spec.backup.verification), passed or
	// failed.
	// +optional
	LastVerifiedBackup *LastVerifiedBackup `json:"lastVerifiedBackup,omitempty"`

	// Conditions: Ready, Progressing, Degraded; Recovered for a Cluster with bootstrap.recovery; OwnershipConflict while objects named after the
	// Cluster exist under another controller (they are left alone); PodMonitorReady while
	// spec.monitoring.podMonitor is enabled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BinlogArchiveStatus is the archive of a Cluster's binary logs as its primary's archiver sees it,
// written at most every 15 seconds.
type BinlogArchiveStatus struct {
	// Instance is the primary whose archiver reported.
	// +optional
	Instance string `json:"instance,omitempty"`
	// LastSegment is the archived segment holding the newest archived transaction, relative to
	// <path>/<cluster>/binlogs/.
	// +optional
	LastSegment string `json:"lastSegment,omitempty"`
	// LastArchivedTime is the commit time of the newest archived transaction.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{6}(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	LastArchivedTime *metav1.MicroTime `json:"lastArchivedTime,omitempty"`
	// LagSeconds is how far the archive trailed the primary when reported: the age of the oldest
	// transaction not archived yet, 0 when everything was archived.
	// +optional
	// +kubebuilder:validation:Maximum=9007199254740991
	LagSeconds int64 `json:"lagSeconds"`
	// RecoverableFrom and RecoverableTo bound the instants a recovery with targetTime can reach:
	// from the end of the oldest base backup the archive carries without a gap (a clone backup
	// is consistent as of its end) to the newest transaction that chain reaches. Empty when no
	// base backup can be carried to the newest archived transaction.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{6}(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	RecoverableFrom *metav1.MicroTime `json:"recoverableFrom,omitempty"`
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{6}(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	RecoverableTo *metav1.MicroTime `json:"recoverableTo,omitempty"`
	// FirstRecoverableBackup is the backup RecoverableFrom is the end of, <backup-name>/<backup-id>.
	// +optional
	FirstRecoverableBackup string `json:"firstRecoverableBackup,omitempty"`
	// ReportedAt is when the archiver last changed this status.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	ReportedAt *metav1.Time `json:"reportedAt,omitempty"`
}

// SemiSyncStatus is what the primary reports of semi-sync. When Active is false while semi-sync is
// enabled, the primary has fallen back to asynchronous replication and acknowledged writes may
// exist only on the primary: failover treats the durability guarantee as suspended.
type SemiSyncStatus struct {
	// Active mirrors Rpl_semi_sync_source_status.
	Active bool `json:"active"`
	// WaitForReplicaCount is the acknowledgement count applied at runtime.
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	WaitForReplicaCount int32 `json:"waitForReplicaCount,omitempty"`
	// Clients is the number of connected semi-sync replicas.
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	Clients int32 `json:"clients,omitempty"`
	// FallenBack: the primary's instance manager switched semi-sync off after a commit waited
	// timeoutMillis; it acknowledges commits alone until semi-sync comes back.
	// +optional
	FallenBack bool `json:"fallenBack,omitempty"`
	// WaitingCommits is the number of sessions whose commit waits for an acknowledgement.
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	WaitingCommits int32 `json:"waitingCommits,omitempty"`
	// LastTransitionTime is when Active last changed.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// RecoveryStatus records the base backup a Cluster was restored from.
type RecoveryStatus struct {
	// Backup is the Backup object's name (bootstrap.recovery.backup) or, for a recovery from a
	// source, the backup's name in the object store.
	// +optional
	Backup string `json:"backup,omitempty"`
	// Path is the backup's directory in the object store, <path>/<cluster>/<backup-name>/<backup-id>/.
	// +optional
	Path string `json:"path,omitempty"`
	// GTIDExecuted is the GTID set the backup holds, which the restored server was checked to have.
	// +optional
	GTIDExecuted string `json:"gtidExecuted,omitempty"`
	// BackupStartedAt and BackupStoppedAt bound the backup.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	BackupStartedAt *metav1.Time `json:"backupStartedAt,omitempty"`
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	BackupStoppedAt *metav1.Time `json:"backupStoppedAt,omitempty"`
	// Instance is the instance restored from the backup (the first primary).
	// +optional
	Instance string `json:"instance,omitempty"`
	// RecoveredAt is when the restore was verified.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	RecoveredAt *metav1.Time `json:"recoveredAt,omitempty"`
	// PointInTime records the replay of archived binlogs when bootstrap.recovery has a
	// recoveryTarget.
	// +optional
	PointInTime *PointInTimeStatus `json:"pointInTime,omitempty"`
}

// PointInTimeStatus records what a point-in-time recovery replayed on top of its base backup.
type PointInTimeStatus struct {
	// Target is the recovery target as reached, e.g. "time 2026-11-25T04:00:00Z".
	Target string `json:"target"`
	// Segments is how many archived binlog segments were downloaded, checked and replayed.
	// +kubebuilder:validation:Maximum=2147483647
	Segments int32 `json:"segments"`
	// Transactions is how many transactions were replayed on top of the base backup.
	// +kubebuilder:validation:Maximum=9007199254740991
	Transactions int64 `json:"transactions"`
	// GTIDExecuted is the restored server's gtid_executed after the replay, checked equal to
	// the base backup's plus the transactions up to the target.
	GTIDExecuted string `json:"gtidExecuted"`
}

// ParametersStatus is what became of spec.mysql.parameters.
type ParametersStatus struct {
	// PendingRestart are the parameters mysqld takes only at its start, with the instances that
	// still run without their new value; the operator restarts those in its rolling-update order.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	PendingRestart []PendingParameter `json:"pendingRestart,omitempty"`
	// Refused are the parameters left out of my.cnf, with the reason.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Refused []RefusedParameter `json:"refused,omitempty"`
}

// PendingParameter is one parameter waiting for a restart of Instances.
type PendingParameter struct {
	// +kubebuilder:validation:MaxLength=256
	Key string `json:"key"`
	// +kubebuilder:validation:MaxItems=64
	Instances []string `json:"instances"`
}

// RefusedParameter is one parameter left out of my.cnf, and why.
type RefusedParameter struct {
	// +kubebuilder:validation:MaxLength=256
	Key string `json:"key"`
	// +kubebuilder:validation:MaxLength=2048
	Reason string `json:"reason"`
}

// InstanceManagerStatus is the binary an instance manager runs.
type InstanceManagerStatus struct {
	// Version is the version the binary was built as.
	Version string `json:"version"`
	// SHA256 is the binary's hex sha256.
	// +optional
	SHA256 string `json:"sha256,omitempty"`
}
