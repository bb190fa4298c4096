package controller

import corev1 "k8s.io/api/core/v1"

// The Cluster Events, one row per transition the Cluster controller makes or observes. They use
// the eventKind table type of events.go; Warnings need a user's attention.
var (
	evClusterInstanceCreated = eventKind{corev1.EventTypeNormal, "InstanceCreated",
		"Created instance %s (PVC and Pod)"}
	evClusterPodRecreated = eventKind{corev1.EventTypeNormal, "InstanceRecreated",
		"Recreated the Pod of instance %s on its retained PVC"}
	evClusterInstanceRemoved = eventKind{corev1.EventTypeNormal, "InstanceRemoved",
		"Scaled down: deleted the Pod of instance %s; its PVC is kept and marked detached"}
	evClusterInstanceUpdating = eventKind{corev1.EventTypeNormal, "InstanceUpdating",
		"Deleting the Pod of instance %s to apply the new spec; it is recreated on its PVC"}
	evClusterTargetPrimarySet = eventKind{corev1.EventTypeNormal, "TargetPrimarySet",
		"Set targetPrimary to %s"}
	evClusterRoleChanged = eventKind{corev1.EventTypeNormal, "RoleChanged",
		"Instance %s: role label %q -> %q, routable %t -> %t"}
	evClusterServiceCreated = eventKind{corev1.EventTypeNormal, "ServiceCreated",
		"Created Service %s"}
	evClusterServiceUpdated = eventKind{corev1.EventTypeNormal, "ServiceUpdated",
		"Updated Service %s"}
	evClusterServiceDeleted = eventKind{corev1.EventTypeNormal, "ServiceDeleted",
		"Deleted Service %s: no longer declared"}
	evClusterSecretCreated = eventKind{corev1.EventTypeNormal, "SecretCreated",
		"Created Secret %s"}
	evClusterCertificateIssued = eventKind{corev1.EventTypeNormal, "CertificateIssued",
		"Issued %s (%s)"}
	evClusterReady = eventKind{corev1.EventTypeNormal, "ClusterReady",
		"All %d instances are ready and %s is the primary"}
	evClusterNotReady = eventKind{corev1.EventTypeNormal, "ClusterNotReady",
		"%s"}
	evClusterRecovered = eventKind{corev1.EventTypeNormal, "Recovered",
		"No longer degraded"}

	evClusterScaleDownBlocked = eventKind{corev1.EventTypeWarning, "ScaleDownBlocked",
		"Cannot scale down to %d instances: every remaining instance is the current or target primary"}
	evClusterDegraded = eventKind{corev1.EventTypeWarning, "Degraded",
		"%s"}
)

// mergeEvents folds the records of one reconcile that share a reason into one Event, keeping the
// first one's position: client-go drops Events beyond a small per-object burst, so a Cluster
// creating ten Secrets must not spend ten of them.
func mergeEvents(in []eventRecord) []eventRecord {
	var out []eventRecord
	index := map[string]int{}
	for _, e := range in {
		if i, ok := index[e.Kind.Reason]; ok {
			out[i].Message += "; " + e.Message
			continue
		}
		index[e.Kind.Reason] = len(out)
		out = append(out, e)
	}
	return out
}
