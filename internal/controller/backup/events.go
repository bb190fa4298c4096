package controller

import corev1 "k8s.io/api/core/v1"

// The Backup Events. Every failure has its own reason, so `kubectl get events` says why.
var (
	evBkPending = eventKind{corev1.EventTypeNormal, "BackupPending",
		"Backing up instance %s with %s to %s"}
	evBkWaiting = eventKind{corev1.EventTypeNormal, "WaitingForTarget",
		"No instance to back up yet: %s; retrying until the timeout"}
	evBkStarted = eventKind{corev1.EventTypeNormal, "BackupStarted",
		"Created Job %s"}
	evBkCompleted = eventKind{corev1.EventTypeNormal, "BackupCompleted",
		"Backup %s completed: %d bytes, %s, GTID set %s"}

	// The remote-cleanup finalizer's Events.
	evBkCleanupEnabled = eventKind{corev1.EventTypeNormal, "RemoteCleanupEnabled",
		"deletionPolicy delete (from %s): deleting this Backup will delete its remote objects"}
	evBkCleanupDisabled = eventKind{corev1.EventTypeNormal, "RemoteCleanupDisabled",
		"deletionPolicy %s (from %s): deleting this Backup will keep its remote objects"}
	evBkCleanupKept = eventKind{corev1.EventTypeNormal, "RemoteObjectsKept",
		"deletionPolicy keep: the remote objects under %s are kept"}
	evBkCleanupBypassed = eventKind{corev1.EventTypeNormal, "RemoteCleanupBypassed",
		"%s is set: the remote objects under %s are kept"}
	evBkCleanupNothing = eventKind{corev1.EventTypeNormal, "RemoteCleanupDone",
		"Nothing to delete: the backup never recorded a destination"}
	evBkCleanupDone = eventKind{corev1.EventTypeNormal, "RemoteCleanupDone",
		"Deleted the archive and metadata.json under %s"}
	evBkCleanupStopJob = eventKind{corev1.EventTypeNormal, "StoppingJob",
		"Deleting the running Job %s before deleting its partial upload under %s"}
	evBkCleanupRefused = eventKind{corev1.EventTypeWarning, "RemoteCleanupRefused", "%s; delete that Cluster, or %s"}
	evBkCleanupBlocked = eventKind{corev1.EventTypeWarning, "RemoteCleanupBlocked", "%s; fix it, or %s"}
	evBkCleanupFailed  = eventKind{corev1.EventTypeWarning, "RemoteCleanupFailed", "%s; retrying in %s"}

	evBkClusterNotFound = eventKind{corev1.EventTypeWarning, "ClusterNotFound", "%s"}
	evBkNoObjectStore   = eventKind{corev1.EventTypeWarning, "NoObjectStore", "%s"}
	evBkUnsupported     = eventKind{corev1.EventTypeWarning, "Unsupported", "%s"}
	evBkJobFailed       = eventKind{corev1.EventTypeWarning, "JobFailed", "%s"}
	evBkJobGone         = eventKind{corev1.EventTypeWarning, "JobGone", "%s"}
	evBkTimedOut        = eventKind{corev1.EventTypeWarning, "TimedOut", "%s"}
	evBkNoMetadata      = eventKind{corev1.EventTypeWarning, "MetadataMissing", "%s"}
)
