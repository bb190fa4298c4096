package location

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// The location Events, recorded on the Cluster.
var (
	evClaimed = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "ObjectStoreClaimed",
		Format: "Claimed the object store location %s: %s"}
	evInUse = kit.EventKind{Type: corev1.EventTypeWarning, Reason: ReasonInUse,
		Format: "Not backing up or archiving to %s: %s"}
	evClaimFailed = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "ObjectStoreClaimFailed",
		Format: "Could not claim the object store location %s: %s; retrying"}
)
