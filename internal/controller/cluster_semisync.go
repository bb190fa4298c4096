package controller

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

var evClusterSemiSyncAdjusted = eventKind{corev1.EventTypeNormal, "SemiSyncAdjusted",
	"Set the acknowledgement count of primary %s from %d to %d (%d of %d replicas healthy, dataDurability %s)"}

// semiSyncAdjustment is the acknowledgement count the primary must run with, and why.
type semiSyncAdjustment struct {
	Primary  string
	From, To int32
	Healthy  int
	Replicas int
}

// decideSemiSync compares the primary's reported rpl_semi_sync_source_wait_for_replica_count with
// the plan over the replicas' health (preferred follows the healthy replicas, never below one;
// required pins minSyncReplicas) and returns the change to make, nil when none is needed or the
// primary did not report. A replica that did not answer, is fenced, diverged, or whose
// replication threads are not both running without error is unhealthy.
func decideSemiSync(c *v1.Cluster, instances []string, reports map[string]*instanceclient.Status) *semiSyncAdjustment {
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
	return &semiSyncAdjustment{Primary: primary, From: pr.SemiSync.WaitForReplicaCount, To: want,
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

// adjustSemiSync applies d on the primary when the status source can; the Event says what
// changed. A failure is returned so the reconcile is retried.
func (r *ClusterReconciler) adjustSemiSync(ctx context.Context, o *clusterObservation) error {
	setter, ok := r.Instances.(instances.SemiSyncSetter)
	if !ok || o.Cluster == nil {
		return nil
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
		return nil
	}
	if err := setter.SetSemiSync(ctx, o.Cluster, *primaryPod, instanceclient.SemiSyncRequest{WaitForReplicaCount: adj.To}); err != nil {
		return fmt.Errorf("setting the acknowledgement count of %s to %d: %w", adj.Primary, adj.To, err)
	}
	emit(r.Recorder, o.Cluster, []eventRecord{evClusterSemiSyncAdjusted.with(adj.Primary, adj.From, adj.To,
		adj.Healthy, adj.Replicas, o.Cluster.Spec.MySQL.SemiSync.DataDurability)})
	return nil
}
