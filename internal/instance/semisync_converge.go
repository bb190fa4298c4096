package instance

import (
	"context"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// ConvergeSemiSync applies semisync.Desired, installing the plugins first when semi-sync is on.
func ConvergeSemiSync(ctx context.Context, op mysql.Operator, spec *v1alpha1.ClusterSpec, primary bool, cur mysql.SemiSyncStatus) (bool, error) {
	want, change := semisync.Desired(spec, primary, cur)
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
