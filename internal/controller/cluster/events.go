package cluster

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// The Cluster Events, one row per transition the Cluster controller makes or observes; Warnings
// need a user's attention.
var (
	evInstanceCreated = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "InstanceCreated",
		Format: "Created instance %s (PVC and Pod)"}
	evInstanceRefused = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "InstanceRefused",
		Format: "The API server refused %s %s: %s"}
	evVolumeExpanding = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "VolumeExpanding",
		Format: "Asked PVC %s to grow from %s to %s"}
	evVolumeExpansionFailed = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "VolumeExpansionFailed",
		Format: "The API server refused to grow PVC %s to %s: %s"}
	evStorageResized = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "StorageResized",
		Format: "%s"}
	evStorageNotResized = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "StorageNotResized",
		Format: "%s"}
	evPodRecreated = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "InstanceRecreated",
		Format: "Recreated the Pod of instance %s on its retained PVC"}
	evInstanceRemoved = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "InstanceRemoved",
		Format: "Scaled down: deleted the Pod of instance %s; its PVC is kept and marked detached"}
	evPVCDeleted = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "PVCDeleted",
		Format: "Deleted PVC %s of a removed instance (storage.whenScaledDown Delete)"}
	evInstanceUpdating = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "InstanceUpdating",
		Format: "Deleting the Pod of instance %s to apply the new spec; it is recreated on its PVC"}
	evInstanceResizing = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "InstanceResizing",
		Format: "Resizing the MySQL container of instance %s in place to %s; mysqld keeps running"}
	evResizeInfeasible = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "ResizeInfeasible",
		Format: "The resize of instance %s waits: %s; lower spec.resources or make room on its node"}
	evResizeRefused = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "ResizeRefused",
		Format: "The API server refused to resize instance %s in place (%s); its Pod is replaced instead"}
	evResizeReplacing = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "InstanceUpdating",
		Format: "Deleting the Pod of instance %s to give it the new resources, which the API server refused in place (%s); it is recreated on its PVC"}
	evManagerReplacing = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "InstanceUpdating",
		Format: "Deleting the Pod of instance %s to update its instance manager, which cannot be updated in place (%s); it is recreated on its PVC"}
	evManagerUpdating = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "InstanceManagerUpdating",
		Format: "Sent instance manager %s to %s, which checked it and replaces its program in place; mysqld keeps running"}
	evManagerUpdateFailed = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "InstanceManagerUpdateFailed",
		Format: "The in-place update of the instance manager of %s failed; it is tried again: %s"}
	evManagerUpdated = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "InstanceManagerUpdated",
		Format: "Instance %s runs instance manager %s"}
	evPrimaryUpdateSwitchover = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "PrimaryUpdateSwitchover",
		Format: "Every replica runs the new spec: switching over from %s to %s to update the primary"}
	evPrimaryRestarting = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "PrimaryUpdateRestart",
		Format: "Every replica runs the new spec: deleting the Pod of the primary %s to restart it in place on its PVC"}
	evPrimaryUpdateWaiting = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "PrimaryUpdateWaitingForPromote",
		Format: "%s"}
	evTargetPrimarySet = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "TargetPrimarySet",
		Format: "Set targetPrimary to %s"}
	evRoleChanged = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "RoleChanged",
		Format: "Instance %s: role label %q -> %q, routable %t -> %t"}
	evServiceCreated = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "ServiceCreated",
		Format: "Created Service %s"}
	evServiceUpdated = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "ServiceUpdated",
		Format: "Updated Service %s"}
	evServiceDeleted = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "ServiceDeleted",
		Format: "Deleted Service %s: no longer declared"}
	evSecretCreated = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "SecretCreated",
		Format: "Created Secret %s"}
	evCertificateIssued = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "CertificateIssued",
		Format: "Issued %s (%s)"}
	evCARollEnded = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "CARollEnded",
		Format: "Every certificate is issued by the new CA; %s no longer trusts the previous one"}
	evReady = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "ClusterReady",
		Format: "All %d instances are ready and %s is the primary"}
	evNotReady = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "ClusterNotReady",
		Format: "%s"}
	evRecovered = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "Recovered",
		Format: "No longer degraded"}
	evSemiSyncAdjusted = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "SemiSyncAdjusted",
		Format: "Set the acknowledgement count of primary %s from %d to %d (%d of %d replicas healthy, dataDurability %s)"}
	evSemiSyncParticipant = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "SemiSyncParticipant",
		Format: "Told replica %s whether it acknowledges commits: %v (maxSyncReplicas %d)"}

	evParametersRefused = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "ParametersRefused",
		Format: "%s"}
	evInstanceRestarting = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "InstanceRestarting",
		Format: "Deleting the Pod of instance %s so that mysqld starts with %s; it is recreated on its PVC"}
	evScaleDownBlocked = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "ScaleDownBlocked",
		Format: "Cannot scale down to %d instances: every remaining instance is the current or target primary"}
	evDegraded = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "Degraded",
		Format: "%s"}
)

// mergeEvents folds the records of one reconcile that share a reason into one Event, keeping the
// first one's position: client-go drops Events beyond a small per-object burst, so a Cluster
// creating ten Secrets must not spend ten of them.
func mergeEvents(in []kit.Event) []kit.Event {
	var out []kit.Event
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

// The Events of high availability: fencing, the primary Lease, switchovers and failovers. The
// steps of a switchover or failover record the Events of internal/failover (EventFor).
var (
	evFenced = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "Fenced",
		Format: "Fenced instance %s: out of every Service, held read-only, never promoted"}
	evUnfenced = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "Unfenced",
		Format: "Unfenced instance %s: it rejoins routing and role reconciliation"}
	evFencingInvalid = kit.EventKind{Type: corev1.EventTypeWarning, Reason: reasonFencingInvalid,
		Format: "The fenced instances are kept as they were: %s"}
	evLeaseTaken = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "PrimaryLeaseTaken",
		Format: "%s holds the primary Lease"}
	evLeaseReleased = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "PrimaryLeaseReleased",
		Format: "The primary Lease held by %q was released"}
	evLeaseExpired = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "PrimaryLeaseExpired",
		Format: "%s stopped renewing the primary Lease; it expired at %s (the holder turned itself read-only before)"}
	evSwitchoverCompleted = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "SwitchoverCompleted",
		Format: "%s is the primary"}
	evPrimaryFenced = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "PrimaryMySQLFenced",
		Format: "Fenced the mysqld of %s over its administrative interface: offline, %d client sessions ended, %d commits waiting for a semi-sync acknowledgement released unacknowledged, super_read_only on"}
	evPrimaryFenceUnreachable = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "PrimaryMySQLUnreachable",
		Format: "Could not reach the mysqld of %s to fence it (%s): its commits can collect no semi-sync acknowledgement, its Pod is deleted"}
	evDataLossAccepted = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "DataLossAccepted",
		Format: "A person accepted the loss of what %s acknowledged alone (promote --accept-data-loss): %s is promoted; at risk: %s"}
	evDiverged = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "InstanceDiverged",
		Format: "Instance %s holds transactions the primary %s never had (%s): kept read-only, out of every Service, never rejoined or cloned over, its PVC kept"}
)
