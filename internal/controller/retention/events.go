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
	evRetentionUnrestorable = eventKind{corev1.EventTypeWarning, "UnrestorableBackups",
		"%d backup(s) have a metadata.json but no archive of the size it records: no restore can use them; they are kept but do not count as backups: %s"}
	evRetentionForeign = eventKind{corev1.EventTypeWarning, "ForeignBackups",
		"%d backup(s) in this Cluster's directory (<path>/<cluster>/) were written by a Cluster of the same name in namespace(s) %s: two Clusters share this object store location, and their backups and binlogs would collide. Those backups are kept and no binlog segment is deleted; give each Cluster its own spec.backup.objectStore path or bucket: %s"}
	evRetentionInvalid = eventKind{corev1.EventTypeWarning, "InvalidRetentionPolicy",
		"%s; no retention pass runs until it is fixed"}
)
