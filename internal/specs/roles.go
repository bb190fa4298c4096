package specs

import (
	"slices"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// InstanceRole is the role label an instance should carry, derived from the Cluster status only:
// primary for status.currentPrimary (the instance that reported its promotion), replica for the
// others. A switchover's or failover's target stays a replica, serving ro, until it has recorded
// its promotion: it then leaves ro in the same reconcile as rw moves to it (rw selects it by name,
// RoleSelector), so kube-proxy gets both changes in one sync. Taken out of ro when the switchover
// began, its ro change made kube-proxy sync then, and kube-proxy syncs at most once a second
// (minSyncPeriod, 1 s by default): rw's change waited for that second (measured on the local
// node: writes resumed 1.0 to 1.1 s after the demotion, of which 0.1 s was the promotion). No role
// while there is no primary yet (a first instance's bootstrap). At most one instance is ever
// labelled primary.
func InstanceRole(c *mysqlv1alpha1.Cluster, instance string) string {
	switch {
	case instance == c.Status.CurrentPrimary:
		return mysqlv1alpha1.RolePrimary
	case instance == c.Status.TargetPrimary && c.Status.CurrentPrimary == "":
		return ""
	default:
		return mysqlv1alpha1.RoleReplica
	}
}

// InstanceRoutable reports whether an instance may receive client traffic: fenced and diverged
// instances are out of every role Service.
func InstanceRoutable(c *mysqlv1alpha1.Cluster, instance string) bool {
	return !slices.Contains(c.Status.FencedInstances, instance) &&
		!slices.Contains(c.Status.DivergedInstances, instance)
}
