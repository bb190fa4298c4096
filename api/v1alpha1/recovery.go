package v1alpha1

// Condition type and reasons of a Cluster bootstrapped from a backup (bootstrap.recovery).
const (
	// ConditionRecovered is True once the first instance's restore was verified, False while it
	// runs or after it failed (the reason says which).
	ConditionRecovered = "Recovered"
	// ReasonRecoveryRestored: the backup was restored and verified (status True).
	ReasonRecoveryRestored = "Restored"
	// ReasonRecoveryRestoring: the first instance is downloading, unpacking and verifying it.
	ReasonRecoveryRestoring = "Restoring"
	// ReasonRecoveryBackupNotFound: the Backup object, its recorded location, or any complete
	// backup of the source cluster is missing.
	ReasonRecoveryBackupNotFound = "BackupNotFound"
	// ReasonRecoveryBackupUnreadable: the object store could not be reached or read (credentials,
	// endpoint, a missing or unreadable object, an unsupported archive).
	ReasonRecoveryBackupUnreadable = "BackupUnreadable"
	// ReasonRecoveryVerificationFailed: the archive or an archived binlog segment does not match
	// its size or sha256, the restored server's gtid_executed is not the one metadata.json
	// records, or after a point-in-time replay it is not the set the target needs.
	ReasonRecoveryVerificationFailed = "VerificationFailed"
	// ReasonRecoveryPointInTimeUnavailable: bootstrap.recovery.recoveryTarget cannot be reached
	// from the backups and the archive: no base backup before it, the named backup is past it,
	// or it lies beyond the archived binlogs. Nothing is restored.
	ReasonRecoveryPointInTimeUnavailable = "PointInTimeUnavailable"
	// ReasonRecoveryArchiveIncomplete: the binlog archive cannot carry the base backup to the
	// target: a gap in the GTID history between the base backup and the segments or between
	// segments, or a segment listed in _index.json whose object is missing. Nothing is restored.
	ReasonRecoveryArchiveIncomplete = "ArchiveIncomplete"

	// EventBackupRestored (Normal) and EventRecoveryFailed (Warning) are the Events of a recovery
	// (the Cluster controller's Recovered Event is about the Degraded condition).
	EventBackupRestored = "BackupRestored"
	EventRecoveryFailed = "RecoveryFailed"
)

// Recovery returns the Cluster's bootstrap.recovery, nil when it has none.
func (c *Cluster) Recovery() *BootstrapRecovery {
	if c.Spec.Bootstrap == nil {
		return nil
	}
	return c.Spec.Bootstrap.Recovery
}

// BackupName is the Backup object the recovery names, "" when it recovers from a source.
func (r *BootstrapRecovery) BackupName() string {
	if r == nil || r.Backup == nil {
		return ""
	}
	return r.Backup.Name
}
