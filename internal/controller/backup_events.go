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

	evBkClusterNotFound = eventKind{corev1.EventTypeWarning, "ClusterNotFound", "%s"}
	evBkNoObjectStore   = eventKind{corev1.EventTypeWarning, "NoObjectStore", "%s"}
	evBkUnsupported     = eventKind{corev1.EventTypeWarning, "Unsupported", "%s"}
	evBkJobFailed       = eventKind{corev1.EventTypeWarning, "JobFailed", "%s"}
	evBkJobGone         = eventKind{corev1.EventTypeWarning, "JobGone", "%s"}
	evBkTimedOut        = eventKind{corev1.EventTypeWarning, "TimedOut", "%s"}
	evBkNoMetadata      = eventKind{corev1.EventTypeWarning, "MetadataMissing", "%s"}
)
