package failover

import "strings"

// LeaseHolder is who holds the primary Lease: the instance (its Pod's name) and the UID of the
// Pod that took it. The UID tells two Pods of one instance apart: a Pod recreated under the same
// name (after a force delete, while the old one may still run on a cut-off node) does not hold
// its predecessor's Lease, and the admission policy of config/rbac lets only the Pod it names
// release it.
type LeaseHolder struct {
	Instance string
	// PodUID is empty in a Lease written by an instance manager that predates it.
	PodUID string
}

// leaseHolderSeparator joins the instance and the Pod UID in holderIdentity; neither a Pod name
// nor a UID contains it. config/rbac/primary_lease_policy.yaml spells the same format in CEL.
const leaseHolderSeparator = "/"

// Identity is the Lease's spec.holderIdentity: "<instance>/<pod-uid>", or the instance alone
// when the Pod UID is not known.
func (h LeaseHolder) Identity() string {
	if h.PodUID == "" {
		return h.Instance
	}
	return h.Instance + leaseHolderSeparator + h.PodUID
}

// ParseLeaseHolder reads a holderIdentity written by Identity, or by an older instance manager
// that wrote the instance alone (then PodUID is empty). An empty identity is no holder.
func ParseLeaseHolder(identity string) LeaseHolder {
	instance, uid, _ := strings.Cut(identity, leaseHolderSeparator)
	return LeaseHolder{Instance: instance, PodUID: uid}
}
