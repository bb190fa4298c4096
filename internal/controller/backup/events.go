package backup

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// The Backup Events. Every failure has its own reason, so `kubectl get events` says why.
var (
	evPending = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "BackupPending",
		Format: "Backing up instance %s with %s to %s"}
	evWaiting = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "WaitingForTarget",
		Format: "No instance to back up yet: %s; retrying until the timeout"}
	evStarted = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "BackupStarted",
		Format: "Created Job %s"}
	evCompleted = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "BackupCompleted",
		Format: "Backup %s completed: %d bytes, %s, GTID set %s"}

	evClusterNotFound  = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "ClusterNotFound", Format: "%s"}
	evNoObjectStore    = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "NoObjectStore", Format: "%s"}
	evQueued           = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "Queued", Format: "Waiting: %s"}
	evSuperseded       = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "Superseded", Format: "Superseded by %s, a newer Backup of the same ScheduledBackup; this one never started"}
	evObjectStoreInUse = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "ObjectStoreInUse", Format: "%s"}
	evUnsupported      = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "Unsupported", Format: "%s"}
	evJobFailed        = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "JobFailed", Format: "%s"}
	evJobGone          = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "JobGone", Format: "%s"}
	evTimedOut         = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "TimedOut", Format: "%s"}
	evNoMetadata       = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "MetadataMissing", Format: "%s"}
)

// The remote-cleanup finalizer's Events.
var (
	evCleanupEnabled = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "RemoteCleanupEnabled",
		Format: "deletionPolicy delete (from %s): deleting this Backup will delete its remote objects"}
	evCleanupDisabled = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "RemoteCleanupDisabled",
		Format: "deletionPolicy %s (from %s): deleting this Backup will keep its remote objects"}
	evCleanupKept = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "RemoteObjectsKept",
		Format: "deletionPolicy keep: the remote objects under %s are kept"}
	evCleanupBypassed = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "RemoteCleanupBypassed",
		Format: "%s is set: the remote objects under %s are kept"}
	evCleanupNothing = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "RemoteCleanupDone",
		Format: "Nothing to delete: the backup never recorded a destination"}
	evCleanupDone = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "RemoteCleanupDone",
		Format: "Deleted the archive and metadata.json under %s"}
	evCleanupStopJob = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "StoppingJob",
		Format: "Deleting the running Job %s before deleting its partial upload under %s"}
	evCleanupRefused = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "RemoteCleanupRefused",
		Format: "%s; delete that Cluster, or %s"}
	evCleanupBlocked = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "RemoteCleanupBlocked",
		Format: "%s; fix it, or %s"}
	evCleanupFailed = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "RemoteCleanupFailed",
		Format: "%s; retrying in %s"}
)
