package clustercontroller

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestStatusAggregatesInstanceReports feeds instance reports and checks what the status keeps.
func TestStatusAggregatesInstanceReports(t *testing.T) {
	c := readyCluster(t, 2, nil)
	ns := c.Namespace
	reports.set(ns, "db-1", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-10", nil)
	reports.set(ns, "db-2", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9", nil)
	t.Cleanup(func() { reports.set(ns, "db-1", "", nil); reports.set(ns, "db-2", "", nil) })
	degraded := func(c *v1.Cluster) *metav1.Condition {
		return meta.FindStatusCondition(c.Status.Conditions, v1.ConditionDegraded)
	}

	check.Eventually(t, waitTimeout, "gtidExecutedByInstance holds both reports and the primary's semi-sync state", func(context.Context) (bool, error) {
		st := getCluster(t, c).Status
		return st.GTIDExecutedByInstance["db-1"] == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-10" &&
			st.GTIDExecutedByInstance["db-2"] == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9" &&
			st.SemiSync != nil && st.SemiSync.Active && st.SemiSync.WaitForReplicaCount == 1 &&
			meta.IsStatusConditionTrue(st.Conditions, v1.ConditionReady) &&
			!meta.IsStatusConditionTrue(st.Conditions, v1.ConditionDegraded), nil
	})
	t.Run("an instance that does not answer degrades the Cluster and keeps its last GTID set", func(t *testing.T) {
		reports.set(ns, "db-2", "", errors.New("instance did not answer: timeout"))
		check.Eventually(t, waitTimeout, "Degraded", func(context.Context) (bool, error) {
			cur := getCluster(t, c)
			d := degraded(cur)
			return d != nil && d.Status == metav1.ConditionTrue && d.Reason == "InstanceUnreachable" &&
				cur.Status.GTIDExecutedByInstance["db-2"] == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9", nil
		})
		assertEvents(t, ns, "Degraded")
	})
	t.Run("an answer again clears Degraded", func(t *testing.T) {
		reports.set(ns, "db-2", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-10", nil)
		check.Eventually(t, waitTimeout, "not Degraded", func(context.Context) (bool, error) {
			cur := getCluster(t, c)
			d := degraded(cur)
			return d != nil && d.Status == metav1.ConditionFalse &&
				cur.Status.GTIDExecutedByInstance["db-2"] == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-10", nil
		})
		assertEvents(t, ns, "Recovered")
	})
}
