package semisync

import (
	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// Desired returns the semi-sync settings one instance should run with, given the spec, whether
// it is the primary, its current state, and what the operator told it about participating
// (told; see Participation). The primary waits for acknowledgements; a replica sends them unless
// the operator left it out of the plan's participants (at most maxSyncReplicas of them), so a
// replica the operator has not told yet acknowledges. On a primary whose source side is on and stays on, the count is the
// operator's (POST /semisync, at runtime): want leaves it as it is (WaitForReplicaCount 0) rather
// than writing back cur's, which was read before the operator may have set a new one. A primary
// that turns semi-sync on starts from PlanFor's count with no replica known healthy (1 under
// preferred, minSyncReplicas under required) until the operator adjusts it. On a primary whose
// instance manager fell back to asynchronous replication (fallenBack), the source side stays as
// it is: turning it back on is DecideFallback's, once a replica has caught up. Whenever semi-sync
// is on, mysqld's own timeout is mysql.SourceTimeoutNever, with the wait point and no-replica
// behaviour the operator owns. change is false when nothing needs to change.
func Desired(spec *v1alpha1.ClusterSpec, primary bool, cur mysql.SemiSyncStatus, fallenBack bool,
	told Participation) (want mysql.SemiSyncSettings, change bool) {
	plan := PlanFor(spec, nil)
	want = plan.SettingsFor("", primary)
	want.ReplicaEnabled = plan.Enabled && !primary && told.Acknowledges()
	if !plan.Enabled && !(cur.SourcePluginInstalled && cur.ReplicaPluginInstalled) {
		return want, false
	}
	if primary && fallenBack && want.SourceEnabled {
		want.SourceEnabled = cur.SourceEnabled
	}
	if cur.SourceEnabled && want.SourceEnabled {
		want.WaitForReplicaCount = 0
	}
	// The count needs no comparison: a source side that stays on leaves it as it is, and one
	// that turns on differs in SourceEnabled.
	same := cur.SourcePluginInstalled && cur.ReplicaPluginInstalled &&
		cur.SourceEnabled == want.SourceEnabled && cur.ReplicaEnabled == want.ReplicaEnabled &&
		cur.Timeout == want.Timeout && cur.WaitPoint == mysql.SourceWaitPoint && cur.WaitNoReplica == mysql.SourceWaitNoReplica
	return want, !same
}
