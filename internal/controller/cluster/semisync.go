package cluster

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// SemiSyncAdjustment is the acknowledgement count the primary must run with, and why.
type SemiSyncAdjustment struct {
	Primary  string
	From, To int32
	Healthy  int
	Replicas int
	// Pod is the primary's Pod, whose instance manager applies the count.
	Pod *corev1.Pod
}

// planSemiSync decides the primary's acknowledgement count over the Cluster's Pods, when the
// operator can set it and the primary's Pod exists.
func (d *Decision) planSemiSync(o Observation) {
	if !o.SemiSyncSettable {
		return
	}
	names := make([]string, 0, len(o.Pods))
	var primaryPod *corev1.Pod
	for i := range o.Pods {
		names = append(names, o.Pods[i].Name)
		if o.Pods[i].Name == o.Cluster.Status.CurrentPrimary {
			primaryPod = &o.Pods[i]
		}
	}
	adj := decideSemiSync(o.Cluster, names, o.Reports)
	if adj == nil || primaryPod == nil {
		return
	}
	adj.Pod = primaryPod
	d.SemiSync = adj
	d.event(stepSemiSync, evSemiSyncAdjusted.With(adj.Primary, adj.From, adj.To, adj.Healthy, adj.Replicas,
		o.Cluster.Spec.MySQL.SemiSync.DataDurability))
}

// decideSemiSync compares the primary's reported rpl_semi_sync_source_wait_for_replica_count with
// the plan over the replicas' health (preferred follows the healthy replicas, never below one;
// required pins minSyncReplicas) and returns the change to make, nil when none is needed or the
// primary did not report. A replica that did not answer, is fenced, diverged, or whose
// replication threads are not both running without error is unhealthy.
func decideSemiSync(c *v1.Cluster, instances []string, reports map[string]*instanceclient.Status) *SemiSyncAdjustment {
	cfg := c.Spec.MySQL.SemiSync
	primary := c.Status.CurrentPrimary
	if cfg == nil || !cfg.Enabled || primary == "" {
		return nil
	}
	pr := reports[primary]
	if pr == nil || pr.Role != v1.RolePrimary || pr.SemiSync == nil {
		return nil
	}
	var replicas []semisync.ReplicaHealth
	healthy := 0
	for _, name := range instances {
		if name == primary {
			continue
		}
		ok := replicaHealthy(c, name, reports[name])
		if ok {
			healthy++
		}
		replicas = append(replicas, semisync.ReplicaHealth{Name: name, Healthy: ok})
	}
	plan := semisync.PlanFor(&c.Spec, replicas)
	want := int32(plan.WaitForReplicaCount)
	if want == pr.SemiSync.WaitForReplicaCount {
		return nil
	}
	return &SemiSyncAdjustment{Primary: primary, From: pr.SemiSync.WaitForReplicaCount, To: want,
		Healthy: healthy, Replicas: len(replicas)}
}

func replicaHealthy(c *v1.Cluster, name string, st *instanceclient.Status) bool {
	if st == nil || st.Replication == nil || slices.Contains(c.Status.FencedInstances, name) ||
		slices.Contains(c.Status.DivergedInstances, name) {
		return false
	}
	r := st.Replication
	return r.IORunning && r.SQLRunning && r.LastError == ""
}

// setSemiSync applies adj on the primary through the instance manager's control API. A failure
// is returned so the reconcile is retried.
func (r *Reconciler) setSemiSync(ctx context.Context, c *v1.Cluster, adj *SemiSyncAdjustment) error {
	if adj == nil {
		return nil
	}
	setter, ok := r.Instances.(instances.SemiSyncSetter)
	if !ok {
		return fmt.Errorf("setting the acknowledgement count of %s: the status source cannot", adj.Primary)
	}
	if err := setter.SetSemiSync(ctx, c, *adj.Pod, instanceclient.SemiSyncRequest{WaitForReplicaCount: adj.To}); err != nil {
		return fmt.Errorf("setting the acknowledgement count of %s to %d: %w", adj.Primary, adj.To, err)
	}
	return nil
}
