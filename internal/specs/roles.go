package specs

import (
	"slices"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// InstanceRole is the role label an instance should carry, derived from the Cluster status only:
// primary for status.currentPrimary (the instance that reported its promotion), no role for a
// targetPrimary still promoting (so neither rw nor ro routes to it), replica otherwise. At most
// one instance is ever labelled primary.
func InstanceRole(c *mysqlv1alpha1.Cluster, instance string) string {
	switch {
	case instance == c.Status.CurrentPrimary:
		return mysqlv1alpha1.RolePrimary
	case instance == c.Status.TargetPrimary:
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
