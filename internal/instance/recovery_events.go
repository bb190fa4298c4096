package instance

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// The Events an instance records on its Cluster while it restores a recovery's backup.
var (
	eventRecovered      = kit.EventKind{Type: corev1.EventTypeNormal, Reason: v1alpha1.EventBackupRestored, Format: "%s"}
	eventRecoveryFailed = kit.EventKind{Type: corev1.EventTypeWarning, Reason: v1alpha1.EventRecoveryFailed, Format: "%s"}
)
