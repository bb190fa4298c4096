package instance

import (
	"context"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// HealthOf derives a replica's semi-sync health from its status: it replicates, both threads
// run, and neither reports an error.
func HealthOf(name string, st *mysql.Status) ReplicaHealth {
	return ReplicaHealth{Name: name, Healthy: st != nil && st.Replication != nil && st.Replication.Healthy()}
}

// ApplySemiSyncPlan installs the semi-sync plugins if missing and applies the plan's settings
// for one instance, at runtime: my.cnf is not touched.
func ApplySemiSyncPlan(ctx context.Context, op mysql.Operator, plan SemiSyncPlan, instance string, primary bool) error {
	if err := op.InstallSemiSyncPlugins(ctx); err != nil {
		return err
	}
	return op.ApplySemiSync(ctx, plan.SettingsFor(instance, primary))
}
