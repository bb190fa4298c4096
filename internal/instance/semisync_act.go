package instance

import (
	"context"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// ApplySemiSyncPlan installs the semi-sync plugins if missing and applies the plan's settings
// for one instance, at runtime: my.cnf is not touched.
func ApplySemiSyncPlan(ctx context.Context, op mysql.Operator, plan semisync.Plan, instance string, primary bool) error {
	if err := op.InstallSemiSyncPlugins(ctx); err != nil {
		return err
	}
	return op.ApplySemiSync(ctx, plan.SettingsFor(instance, primary))
}
