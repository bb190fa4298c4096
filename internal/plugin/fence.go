package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// SetFencing fences (fenced=true) or unfences an instance of a Cluster, or every instance with
// "*", by editing the Cluster's FencedInstancesAnnotation under an optimistic lock, retried on
// conflict with a fresh read. It returns what it did, for the user. The operator mirrors the
// annotation into status.fencedInstances and acts on it.
func SetFencing(ctx context.Context, c client.Client, ns, clusterName, instance string, fenced bool) (string, error) {
	var message string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cluster, err := getCluster(ctx, c, ns, clusterName)
		if err != nil {
			return err
		}
		current, err := cluster.FencedInstancesRequested()
		if err != nil {
			return fmt.Errorf("%w; fix or remove it with kubectl annotate cluster %s %s-", err, clusterName, v1.FencedInstancesAnnotation)
		}
		var next []string
		var changed bool
		if fenced {
			next, changed, message, err = fenceOn(ctx, c, cluster, current, instance)
		} else {
			next, changed, message, err = fenceOff(ctx, c, cluster, current, instance)
		}
		if err != nil || !changed {
			return err
		}
		old := cluster.DeepCopy()
		if value := v1.FormatFencedInstances(next); value == "" {
			delete(cluster.Annotations, v1.FencedInstancesAnnotation)
		} else {
			if cluster.Annotations == nil {
				cluster.Annotations = map[string]string{}
			}
			cluster.Annotations[v1.FencedInstancesAnnotation] = value
		}
		return needs(kit.PatchSpec(ctx, c, cluster, old), "patch", "clusters.mysql.cloudnative-mysql.io", ns)
	})
	return message, err
}

func fenceOn(ctx context.Context, c client.Reader, cluster *v1.Cluster, current []string, instance string) ([]string, bool, string, error) {
	if instance != v1.FenceAllInstances {
		if err := checkInstanceOf(ctx, c, cluster, instance); err != nil {
			return nil, false, "", err
		}
	}
	next, changed := v1.AddFencedInstance(current, instance)
	switch {
	case !changed && instance == v1.FenceAllInstances:
		return next, false, fmt.Sprintf("every instance of %s is already fenced", cluster.Name), nil
	case !changed:
		return next, false, fmt.Sprintf("%s is already fenced", instance), nil
	case instance == v1.FenceAllInstances:
		return next, true, fmt.Sprintf("every instance of %s fenced: the Cluster accepts no writes and serves no reads until unfenced", cluster.Name), nil
	case instance == cluster.Status.CurrentPrimary:
		return next, true, fmt.Sprintf("%s fenced; it is the primary: the Cluster accepts no writes until it is unfenced", instance), nil
	}
	return next, true, fmt.Sprintf("%s fenced", instance), nil
}

// fenceOff unfences an instance listed in the annotation without asking for its Pod, so a name
// whose Pod is gone can still be removed; an unlisted name must be an instance of the Cluster.
func fenceOff(ctx context.Context, c client.Reader, cluster *v1.Cluster, current []string, instance string) ([]string, bool, string, error) {
	next, changed, err := v1.RemoveFencedInstance(current, instance)
	switch {
	case err != nil:
		return nil, false, "", err
	case changed && instance == v1.FenceAllInstances:
		return next, true, fmt.Sprintf("every instance of %s unfenced", cluster.Name), nil
	case changed:
		return next, true, fmt.Sprintf("%s unfenced", instance), nil
	case instance == v1.FenceAllInstances:
		return next, false, fmt.Sprintf("no instance of %s is fenced", cluster.Name), nil
	}
	if err := checkInstanceOf(ctx, c, cluster, instance); err != nil {
		return nil, false, "", err
	}
	return next, false, fmt.Sprintf("%s is not fenced", instance), nil
}

func newFenceCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fence",
		Short: "Fence or unfence instances: out of every Service and held read-only",
	}
	for _, on := range []bool{true, false} {
		use, short := "on", "Fence an instance (or '*' for all): it leaves every Service and turns read-only"
		if !on {
			use, short = "off", "Unfence an instance (or '*' for all): it rejoins routing and role reconciliation"
		}
		cmd.AddCommand(&cobra.Command{
			Use:   use + " CLUSTER INSTANCE",
			Short: short,
			Args:  cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, ns, err := e.client()
				if err != nil {
					return err
				}
				msg, err := SetFencing(cmd.Context(), c, ns, args[0], args[1], on)
				if err != nil {
					return err
				}
				fmt.Fprintln(e.streams.Out, msg)
				e.warnIfOperatorSilent(cmd.Context(), c, ns, args[0])
				return nil
			},
		})
	}
	return cmd
}
