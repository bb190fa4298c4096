package plugin

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// CheckAcceptDataLoss says why the loss of what c's primary acknowledged alone cannot be accepted
// with instance as the new primary, or nil. An earlier acceptance not acted on yet does not stop
// a new one: it is replaced (the replica it named could not be promoted, say). It is accepted only while the operator reports the
// failover blocked for that reason (Degraded, AcknowledgedWritesOnPrimaryOnly): the acceptance is
// of a loss the operator named, never a blanket one. The operator checks the rest when it acts
// (the instance eligible, holding everything the most advanced replica holds).
func CheckAcceptDataLoss(c *v1.Cluster, instance string) error {
	st := c.Status
	cond := meta.FindStatusCondition(st.Conditions, v1.ConditionDegraded)
	switch {
	case st.CurrentPrimary == "":
		return fmt.Errorf("%s has no primary yet: there is nothing to accept", c.Name)
	case cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != failover.ReasonAcknowledgedWritesOnPrimaryOnly:
		return fmt.Errorf("the failover of %s is not blocked on writes its primary acknowledged alone (no Degraded condition with reason %s): "+
			"there is no loss to accept; use promote without --accept-data-loss for a switchover",
			c.Name, failover.ReasonAcknowledgedWritesOnPrimaryOnly)
	case st.PrimaryFailingSince == nil:
		return fmt.Errorf("the primary %s of %s is not recorded failing: there is no failover to let through", st.CurrentPrimary, c.Name)
	case st.CurrentPrimary == instance:
		return fmt.Errorf("%s is the failing primary: name the replica to promote", instance)
	case v1.FencedInstancesContain(st.FencedInstances, instance):
		return fmt.Errorf("%s is fenced and cannot be promoted: unfence it first", instance)
	case slices.Contains(st.DivergedInstances, instance):
		return fmt.Errorf("%s has diverged (its GTID set is not contained in the primary's) and cannot be promoted", instance)
	}
	return nil
}

// AcceptDataLoss records in status.dataLossAccepted that a person accepts the loss of what the
// failing primary acknowledged alone, and names instance as the replica to promote; the operator
// then fails over to it, records what was lost and emits a DataLossAccepted Warning Event. The
// status patch carries an optimistic lock; a lost race reads the Cluster again and checks again.
func AcceptDataLoss(ctx context.Context, c client.Client, clk clock.PassiveClock, ns, clusterName, instance string) (former string, err error) {
	err = patchInstanceRequest(ctx, c, ns, clusterName, instance, CheckAcceptDataLoss, func(cluster *v1.Cluster) {
		// For this failure only: the operator compares failingSince with the failure it acts on.
		// One given earlier and not acted on yet (naming a replica that could not be promoted) is
		// replaced.
		former = cluster.Status.CurrentPrimary
		cluster.Status.DataLossAccepted = &v1.DataLossAcceptance{FormerPrimary: former, Instance: instance,
			FailingSince: *cluster.Status.PrimaryFailingSince, AcceptedAt: metav1.NewTime(clk.Now())}
	})
	return former, err
}
