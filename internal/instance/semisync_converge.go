package instance

import (
	"context"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// ConvergeSemiSync applies semisync.Desired, installing the plugins first when semi-sync is on.
// fallenBack: the primary's instance manager fell back to asynchronous replication, and the
// source side stays off until it turns it back on (SemiSyncFallback). told: what the operator
// last told this replica about acknowledging (SemiSyncParticipation).
func ConvergeSemiSync(ctx context.Context, op mysql.Operator, spec *v1alpha1.ClusterSpec, primary bool, cur mysql.SemiSyncStatus,
	fallenBack bool, told semisync.Participation) (bool, error) {
	want, change := semisync.Desired(spec, primary, cur, fallenBack, told)
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
