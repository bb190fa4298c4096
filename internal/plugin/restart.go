package plugin

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// annotateNow sets annotation on the Cluster to the time, under an optimistic lock.
func annotateNow(ctx context.Context, c client.Client, clk clock.PassiveClock, ns, name, annotation string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cluster, err := getCluster(ctx, c, ns, name)
		if err != nil {
			return err
		}
		old := cluster.DeepCopy()
		if cluster.Annotations == nil {
			cluster.Annotations = map[string]string{}
		}
		cluster.Annotations[annotation] = clk.Now().UTC().Format(time.RFC3339Nano)
		return c.Patch(ctx, cluster, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{}))
	})
}

// RestartCluster asks for a rolling restart of every instance (RestartedAtAnnotation): replicas
// first, then the primary as the Cluster's primaryUpdateStrategy and primaryUpdateMethod say.
func RestartCluster(ctx context.Context, c client.Client, clk clock.PassiveClock, ns, name string) error {
	return annotateNow(ctx, c, clk, ns, name, v1.RestartedAtAnnotation)
}

// RestartInstance restarts one replica: its Pod is deleted with its grace period and recreated on
// its PVC. The primary of several instances is refused (restart the Cluster, or promote another
// instance first): deleting its Pod would be a failure, not a restart. The replica's semi-sync
// acknowledgements are not handed over first (restart the Cluster for that): under required with
// one acknowledger, commits wait until another replica is told to acknowledge.
func RestartInstance(ctx context.Context, c client.Client, ns, name, instance string) error {
	cluster, err := getCluster(ctx, c, ns, name)
	if err != nil {
		return err
	}
	if err := checkInstanceOf(ctx, c, cluster, instance); err != nil {
		return err
	}
	if st := cluster.Status; (instance == st.CurrentPrimary || instance == st.TargetPrimary) && cluster.Spec.Instances > 1 {
		return fmt.Errorf("%s is the primary of %s (or about to be): restart the whole Cluster (kubectl cnmysql restart %s), "+
			"or promote another instance first", instance, name, name)
	}
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace = instance, ns
	if err := c.Delete(ctx, pod); err != nil {
		return fmt.Errorf("deleting Pod %s/%s: %w", ns, instance, err)
	}
	return nil
}

// Reload asks every instance to apply spec.mysql.parameters again (ReloadedAtAnnotation).
func Reload(ctx context.Context, c client.Client, clk clock.PassiveClock, ns, name string) error {
	return annotateNow(ctx, c, clk, ns, name, v1.ReloadedAtAnnotation)
}

func newRestartCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "restart CLUSTER [INSTANCE]",
		Short: "Restart every instance in the safe order, or one replica",
		Long: "Without INSTANCE, restarts every instance of the Cluster as a rolling update does: replicas one at a time, " +
			"then the primary as primaryUpdateStrategy and primaryUpdateMethod say (by default after a switchover to an " +
			"updated replica). With INSTANCE, restarts that replica: its Pod is deleted and recreated on its volume. " +
			"The primary alone is refused: restart the Cluster, or promote another instance first.",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := e.client()
			if err != nil {
				return err
			}
			if len(args) == 2 {
				if err := RestartInstance(cmd.Context(), c, ns, args[0], args[1]); err != nil {
					return err
				}
				fmt.Fprintf(e.streams.Out, "restarting %s: its Pod is recreated on its volume\n", args[1])
				return nil
			}
			if err := RestartCluster(cmd.Context(), c, e.clock, ns, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.streams.Out, "rolling restart of %s requested; follow it with kubectl cloudnative-mysql status %s\n", args[0], args[0])
			return nil
		},
	}
}

func newReloadCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "reload CLUSTER",
		Short: "Apply spec.mysql.parameters again on every instance",
		Long: "Every instance sets each of spec.mysql.parameters again at runtime (SET GLOBAL) and rewrites my.cnf, " +
			"undoing changes made by hand; parameters mysqld takes only at its start are reported pending a restart.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := e.client()
			if err != nil {
				return err
			}
			if err := Reload(cmd.Context(), c, e.clock, ns, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.streams.Out, "reload of %s requested\n", args[0])
			return nil
		},
	}
}
