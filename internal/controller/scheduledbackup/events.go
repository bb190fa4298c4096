package controller

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// eventKind is one row of the table of Events the operator emits: its type, its reason (what
// `kubectl describe` and `kubectl get events` show) and the format of its message.
type eventKind struct {
	Type   string
	Reason string
	Format string
}

// The ScheduledBackup Events. Warnings need a user's attention; Normal events trace progress.
var (
	evBackupCreated = eventKind{corev1.EventTypeNormal, "BackupCreated",
		"Created Backup %s for the slot %s"}
	evImmediateBackupCreated = eventKind{corev1.EventTypeNormal, "ImmediateBackupCreated",
		"Created the immediate Backup %s"}
	evBackupAdopted = eventKind{corev1.EventTypeNormal, "BackupAdopted",
		"Adopted Backup %s (slot %s): it carries this schedule's label but was not yet recorded in status"}
	evBackupDeferred = eventKind{corev1.EventTypeNormal, "BackupDeferred",
		"The slot %s waits: Backup %s is still %s and Backups of one schedule never overlap"}
	evSkippedImmediately = eventKind{corev1.EventTypeNormal, "SkippedImmediately",
		"spec.skipImmediately consumed and reset to false: %s; the next slot is %s"}
	evSuspended = eventKind{corev1.EventTypeNormal, "Suspended",
		"Scheduling suspended: no new Backups; existing Backups are left alone"}
	evResumed = eventKind{corev1.EventTypeNormal, "Resumed",
		"Scheduling resumed"}
	evBackupsPruned = eventKind{corev1.EventTypeNormal, "BackupsPruned",
		"Deleted %d %s Backup object(s) beyond the history limit of %d: %s; their remote data is kept"}
	evRecovered = eventKind{corev1.EventTypeNormal, "Recovered",
		"The most recent Backup %s completed"}

	evInvalidSchedule = eventKind{corev1.EventTypeWarning, "InvalidSchedule",
		"%s; fix the spec, nothing is retried until then"}
	evNameCollision = eventKind{corev1.EventTypeWarning, "NameCollision",
		"Backup %s already exists and does not carry the label %s=%s: not adopting it; the slot %s is skipped"}
	evClusterNotFound = eventKind{corev1.EventTypeWarning, "ClusterNotFound",
		"Cluster %s not found: no Backup is taken until it exists; retrying"}
	evMissedSlots = eventKind{corev1.EventTypeWarning, "MissedSlots",
		"%s slot(s) from %s were not run (operator down, schedule suspended or a Backup still running); one Backup is taken for the most recent slot %s"}
	evBackupFailed = eventKind{corev1.EventTypeWarning, "BackupFailed",
		"Backup %s failed: %s; the schedule continues"}
)

// eventRecord is one Event to emit: a row of the table and its rendered message.
type eventRecord struct {
	Kind    eventKind
	Message string
}

// with renders the message of k with args.
func (k eventKind) with(args ...any) eventRecord {
	return eventRecord{Kind: k, Message: fmt.Sprintf(k.Format, args...)}
}

// emit records events on obj in order.
func emit(rec record.EventRecorder, obj runtime.Object, events []eventRecord) {
	for _, e := range events {
		rec.Event(obj, e.Kind.Type, e.Kind.Reason, e.Message)
	}
}
