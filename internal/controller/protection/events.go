package protection

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// The protection Events, recorded on the Cluster.
var (
	evFailed    = kit.EventKind{Type: corev1.EventTypeWarning, Reason: ReasonFailed, Format: "%s"}
	evNoSuccess = kit.EventKind{Type: corev1.EventTypeWarning, Reason: ReasonNoSuccess, Format: "%s"}
	evPruned    = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "BackupObjectsPruned",
		Format: "Deleted %d Backup object(s) finished more than finishedBackupTTL %s ago (remote data follows each one's deletion policy): %s"}
	evHealthy = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "BackupsHealthy", Format: "Backups healthy again: %s"}
)
