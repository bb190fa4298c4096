package semisync

import (
	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// Desired returns the semi-sync settings one instance should run with, given the spec, whether
// it is the primary, and its current state. The primary waits for acknowledgements and every
// replica sends them. On a primary whose source side is on and stays on, the count is the
// operator's (POST /semisync, at runtime): want leaves it as it is (WaitForReplicaCount 0) rather
// than writing back cur's, which was read before the operator may have set a new one. A primary
// that turns semi-sync on starts from PlanFor's count with no replica known healthy (1 under
// preferred, minSyncReplicas under required) until the operator adjusts it. change is false when
// nothing needs to change.
func Desired(spec *v1alpha1.ClusterSpec, primary bool, cur mysql.SemiSyncStatus) (want mysql.SemiSyncSettings, change bool) {
	plan := PlanFor(spec, nil)
	want = mysql.SemiSyncSettings{
		SourceEnabled:       plan.Enabled && primary,
		ReplicaEnabled:      plan.Enabled && !primary,
		WaitForReplicaCount: plan.WaitForReplicaCount,
		Timeout:             plan.Timeout,
	}
	if !plan.Enabled && !(cur.SourcePluginInstalled && cur.ReplicaPluginInstalled) {
		return want, false
	}
	if cur.SourceEnabled && want.SourceEnabled {
		want.WaitForReplicaCount = 0
	}
	// The count needs no comparison: a source side that stays on leaves it as it is, and one
	// that turns on differs in SourceEnabled.
	same := cur.SourcePluginInstalled && cur.ReplicaPluginInstalled &&
		cur.SourceEnabled == want.SourceEnabled && cur.ReplicaEnabled == want.ReplicaEnabled &&
		cur.Timeout == want.Timeout
	return want, !same
}
