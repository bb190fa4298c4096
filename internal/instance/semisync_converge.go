package instance

import (
	"context"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// DesiredSemiSync returns the semi-sync settings this instance should run with, given the spec,
// whether it is the primary, and its current state. The primary waits for acknowledgements and
// every replica sends them; the count the operator set at runtime (POST /semisync) is kept, and a
// primary that turns semi-sync on starts from PlanSemiSync's count with no replica known healthy
// (1 under preferred, minSyncReplicas under required) until the operator adjusts it. ok is false
// when nothing needs to change.
func DesiredSemiSync(spec *v1alpha1.ClusterSpec, primary bool, cur mysql.SemiSyncStatus) (mysql.SemiSyncSettings, bool) {
	plan := PlanSemiSync(spec, nil)
	want := mysql.SemiSyncSettings{
		SourceEnabled:       plan.Enabled && primary,
		ReplicaEnabled:      plan.Enabled && !primary,
		WaitForReplicaCount: plan.WaitForReplicaCount,
		Timeout:             plan.Timeout,
	}
	if !plan.Enabled && !(cur.SourcePluginInstalled && cur.ReplicaPluginInstalled) {
		return want, false
	}
	if cur.SourceEnabled && want.SourceEnabled && cur.WaitForReplicaCount >= 1 {
		want.WaitForReplicaCount = cur.WaitForReplicaCount
	}
	same := cur.SourcePluginInstalled && cur.ReplicaPluginInstalled &&
		cur.SourceEnabled == want.SourceEnabled && cur.ReplicaEnabled == want.ReplicaEnabled &&
		cur.Timeout == want.Timeout && (!want.SourceEnabled || cur.WaitForReplicaCount == want.WaitForReplicaCount)
	return want, !same
}

// ConvergeSemiSync applies DesiredSemiSync, installing the plugins first when semi-sync is on.
func ConvergeSemiSync(ctx context.Context, op mysql.Operator, spec *v1alpha1.ClusterSpec, primary bool, cur mysql.SemiSyncStatus) (bool, error) {
	want, change := DesiredSemiSync(spec, primary, cur)
	if !change {
		return false, nil
	}
	if want.SourceEnabled || want.ReplicaEnabled {
		if err := op.InstallSemiSyncPlugins(ctx); err != nil {
			return false, err
		}
	}
	return true, op.ApplySemiSync(ctx, want)
}
