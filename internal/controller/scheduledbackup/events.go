package scheduledbackup

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// The ScheduledBackup Events, recorded on the ScheduledBackup. Warnings need a user's attention;
// Normal events trace progress.
var (
	evBackupCreated = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "BackupCreated",
		Format: "Created Backup %s for the slot %s"}
	evImmediateBackupCreated = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "ImmediateBackupCreated",
		Format: "Created the immediate Backup %s"}
	evBackupAdopted = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "BackupAdopted",
		Format: "Adopted Backup %s (slot %s): it carries this schedule's label but was not yet recorded in status"}
	evBackupDeferred = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "BackupDeferred",
		Format: "The slot %s waits: Backup %s is still %s and Backups of one schedule never overlap"}
	evSkippedImmediately = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "SkippedImmediately",
		Format: "spec.skipImmediately consumed and reset to false: %s; the next slot is %s"}
	evSuspended = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "Suspended",
		Format: "Scheduling suspended: no new Backups; existing Backups are left alone"}
	evResumed = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "Resumed",
		Format: "Scheduling resumed"}
	evBackupsPruned = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "BackupsPruned",
		Format: "Deleted %d %s Backup object(s) beyond the history limit of %d: %s; their remote data is kept"}
	evRecovered = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "Recovered",
		Format: "The most recent Backup %s completed"}

	evInvalidSchedule = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "InvalidSchedule",
		Format: "%s; fix the spec, nothing is retried until then"}
	evTooFrequent   = kit.EventKind{Type: corev1.EventTypeWarning, Reason: reasonTooFrequent, Format: "%s"}
	evNameCollision = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "NameCollision",
		Format: "Backup %s already exists and does not carry the label %s=%s: not adopting it; the slot %s is skipped"}
	evClusterNotFound = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "ClusterNotFound",
		Format: "Cluster %s not found: no Backup is taken until it exists; retrying"}
	evMissedSlots = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "MissedSlots",
		Format: "%s slot(s) from %s were not run (operator down, schedule suspended or a Backup still running); one Backup is taken for the most recent slot %s"}
	evBackupFailed = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "BackupFailed",
		Format: "Backup %s failed: %s; the schedule continues"}
)
