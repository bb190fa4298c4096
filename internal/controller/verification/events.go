package verification

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// The Events of verifications, on the Cluster and on the Backup verified.
var (
	evStarted = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "VerificationStarted",
		Format: "verifying Backup %s in Job %s (%s)"}
	evPassed = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "BackupVerified",
		Format: "Backup %s verified: %s"}
	evFailed = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "BackupVerificationFailed",
		Format: "%s: %s"}
	evNameTaken = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "VerificationJobNameTaken",
		Format: "cannot verify Backup %[2]s: a Job named %[1]s that is not its verification exists; delete or rename it"}
)

// outcomeEvent is the Event of a verification's result.
func outcomeEvent(o Outcome) kit.Event {
	if o.Status.Passed {
		return evPassed.With(o.Backup, o.Message)
	}
	return evFailed.With(o.Status.Reason, o.Message)
}
