package clustercontroller

import (
	"context"
	"errors"
	"fmt"
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
	check.Eventually(t, waitTimeout, "the replica's channel, and a failover unsafe: semi-sync is off and db-2 lacks a transaction", func(context.Context) (bool, error) {
		st := getCluster(t, c).Status
		r, ok := st.InstanceReplication["db-2"]
		_, primaryListed := st.InstanceReplication["db-1"]
		f := st.FailoverReadiness
		if ok && !primaryListed && r.Source == "db-1" && r.IORunning && r.SQLRunning && r.LagSeconds != nil && *r.LagSeconds == 0 &&
			r.LagTransactions != nil && *r.LagTransactions == 0 &&
			f != nil && !f.Safe && f.Reason == "AsyncCandidateBehind" && f.Candidate == "db-2" {
			return true, nil
		}
		return false, fmt.Errorf("%+v %+v", st.InstanceReplication, f)
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
		check.Eventually(t, waitTimeout, "a failover safe once db-2 holds everything", func(context.Context) (bool, error) {
			f := getCluster(t, c).Status.FailoverReadiness
			if f != nil && f.Safe && f.Reason == "CandidateReady" && f.Candidate == "db-2" {
				return true, nil
			}
			return false, fmt.Errorf("%+v", f)
		})
		assertEvents(t, ns, "Recovered")
	})
}
