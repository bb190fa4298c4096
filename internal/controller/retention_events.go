package controller

import corev1 "k8s.io/api/core/v1"

// The retention Events, recorded on the Cluster.
var (
	evRetention = eventKind{corev1.EventTypeNormal, "BackupRetention",
		"Retention pass (%s) deleted %s"}

	evRetentionFailed = eventKind{corev1.EventTypeWarning, "RetentionFailed",
		"Retention pass failed: %s; nothing is stamped, retrying in %s"}
	evRetentionUnreadable = eventKind{corev1.EventTypeWarning, "UnreadableBackupMetadata",
		"%d backup(s) have an invalid metadata.json, or one dated in the future (a clock ahead), and are kept, and no binlog segment is deleted while they remain: %s"}
	evRetentionInvalid = eventKind{corev1.EventTypeWarning, "InvalidRetentionPolicy",
		"%s; no retention pass runs until it is fixed"}
)
