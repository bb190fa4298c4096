package plugin

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// CheckPromotion says why instance cannot be requested as the new primary of c, or nil. It checks
// only what the Cluster object tells; the operator validates the rest (ready, replicating, GTID
// set) and reports a switchover it cannot do as blocked.
func CheckPromotion(c *v1.Cluster, instance string) error {
	st := c.Status
	switch {
	case st.CurrentPrimary == "":
		return fmt.Errorf("%s has no primary yet: wait until it is bootstrapped", c.Name)
	case st.TargetPrimary == instance && st.CurrentPrimary != instance:
		return fmt.Errorf("%s is already the target primary of %s: the switchover to it is in progress", instance, c.Name)
	case st.TargetPrimary != st.CurrentPrimary:
		return fmt.Errorf("a switchover or failover of %s is already in progress (from %q to %q): wait until it ends",
			c.Name, st.CurrentPrimary, st.TargetPrimary)
	case st.CurrentPrimary == instance:
		return fmt.Errorf("%s is already the primary of %s", instance, c.Name)
	case v1.FencedInstancesContain(st.FencedInstances, instance):
		return fmt.Errorf("%s is fenced and cannot be promoted: unfence it first", instance)
	case slices.Contains(st.DivergedInstances, instance):
		return fmt.Errorf("%s has diverged (its GTID set is not contained in the primary's) and cannot be promoted", instance)
	}
	requested, err := c.FencedInstancesRequested()
	if err != nil {
		return fmt.Errorf("cannot tell whether %s is fenced: %w", instance, err)
	}
	if v1.FencedInstancesContain(requested, instance) {
		return fmt.Errorf("%s is fenced and cannot be promoted: unfence it first", instance)
	}
	return nil
}

// CheckAdvance is the plugin's own pre-check of a promotion (skipped by --force): the target must
// have executed every transaction the primary had, as the instances last reported them in
// status.gtidExecutedByInstance. The operator's own check at the switchover (the target holds the
// old primary's GTID set) is never skipped.
func CheckAdvance(c *v1.Cluster, instance string) error {
	reported := c.Status.GTIDExecutedByInstance
	primary := c.Status.CurrentPrimary
	ps, pok := reported[primary]
	ts, tok := reported[instance]
	if !pok || !tok {
		return fmt.Errorf("cannot tell whether %s is as advanced as the primary %s: no GTID set reported for %s "+
			"(kubectl cloudnative-mysql status %s shows them; --force skips this check, not the operator's)",
			instance, primary, map[bool]string{true: instance, false: primary}[pok], c.Name)
	}
	p, err := gtid.Parse(ps)
	if err != nil {
		return fmt.Errorf("the primary's reported GTID set: %w", err)
	}
	t, err := gtid.Parse(ts)
	if err != nil {
		return fmt.Errorf("the reported GTID set of %s: %w", instance, err)
	}
	if missing := p.Subtract(t); !missing.IsEmpty() {
		return fmt.Errorf("%s lags the primary %s: it lacks %d transaction(s) the primary executed (%s), as last reported; "+
			"wait until it catches up, or use --force (the operator still waits for the target to hold the primary's "+
			"transactions before promoting it)", instance, primary, missing.Count(), missing)
	}
	return nil
}

// Promote requests a switchover to instance: status.targetPrimary names it and
// status.targetPrimaryTimestamp is now. The status patch carries an optimistic lock, and a lost
// race reads the Cluster again and checks again, so a concurrent switchover or failover is never
// overwritten.
// Unless force, the target must also pass CheckAdvance.
func Promote(ctx context.Context, c client.Client, clk clock.PassiveClock, ns, clusterName, instance string, force bool) error {
	check := func(cluster *v1.Cluster, instance string) error {
		if err := CheckPromotion(cluster, instance); err != nil || force {
			return err
		}
		return CheckAdvance(cluster, instance)
	}
	return patchInstanceRequest(ctx, c, ns, clusterName, instance, check, func(cluster *v1.Cluster) {
		now := metav1.NewTime(clk.Now())
		cluster.Status.TargetPrimary, cluster.Status.TargetPrimaryTimestamp = instance, &now
	})
}

// patchInstanceRequest reads the Cluster, checks that instance is one of its instances and that
// check allows the request, applies change to its status and patches it with an optimistic lock;
// a lost race starts again from the read, so a concurrent change is never overwritten.
func patchInstanceRequest(ctx context.Context, c client.Client, ns, clusterName, instance string,
	check func(*v1.Cluster, string) error, change func(*v1.Cluster)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cluster, err := getCluster(ctx, c, ns, clusterName)
		if err != nil {
			return err
		}
		if err := checkInstanceOf(ctx, c, cluster, instance); err != nil {
			return err
		}
		if err := check(cluster, instance); err != nil {
			return err
		}
		old := cluster.DeepCopy()
		change(cluster)
		return needs(kit.PatchStatus(ctx, c, cluster, old), "patch", "clusters.mysql.cloudnative-mysql.io/status", ns)
	})
}

func newPromoteCommand(e *env) *cobra.Command {
	var acceptDataLoss, force bool
	cmd := &cobra.Command{
		Use:   "promote CLUSTER INSTANCE",
		Short: "Request a switchover: make a replica the primary",
		Long: "Sets status.targetPrimary of the Cluster to INSTANCE. The operator validates the target " +
			"(ready, replicating, GTID set), demotes the current primary and lets the target promote; " +
			"it reports a switchover it cannot do as blocked in the Cluster's conditions and Events.\n\n" +
			"With --accept-data-loss, for a failover the operator blocked because the failing primary fell back " +
			"to asynchronous replication and may hold acknowledged writes no replica has (Degraded, reason " +
			"AcknowledgedWritesOnPrimaryOnly): records in status.dataLossAccepted that you give those writes up, " +
			"and lets the failover promote INSTANCE. The operator records what is lost in that field and in a " +
			"DataLossAccepted Warning Event; the old primary, if it comes back, is kept diverged with its writes.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := e.client()
			if err != nil {
				return err
			}
			if acceptDataLoss {
				former, err := AcceptDataLoss(cmd.Context(), c, e.clock, ns, args[0], args[1])
				if err != nil {
					return err
				}
				fmt.Fprintf(e.streams.Out, "accepted the loss of the writes %s may hold alone; the failover of %s promotes %s: "+
					"follow it with kubectl cloudnative-mysql status %s and the DataLossAccepted Event\n", former, args[0], args[1], args[0])
				return nil
			}
			if err := Promote(cmd.Context(), c, e.clock, ns, args[0], args[1], force); err != nil {
				return err
			}
			fmt.Fprintf(e.streams.Out, "switchover of %s to %s requested; follow it with kubectl cloudnative-mysql status %s\n",
				args[0], args[1], args[0])
			e.warnIfOperatorSilent(cmd.Context(), c, ns, args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false,
		"skip the plugin's check that INSTANCE has the primary's transactions (the operator's own check is never skipped)")
	cmd.Flags().BoolVar(&acceptDataLoss, "accept-data-loss", false,
		"let a failover blocked on writes the failing primary acknowledged alone promote INSTANCE, giving those writes up")
	return cmd
}
