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

// SemiSyncParticipantTell is one replica to tell whether it acknowledges, with its Pod.
type SemiSyncParticipantTell struct {
	semisync.ParticipantChange
	Pod *corev1.Pod
}

// planSemiSync decides the primary's acknowledgement count and the replicas to tell whether
// they acknowledge, over the Cluster's Pods, when the operator can set them.
func (d *Decision) planSemiSync(o Observation) {
	if !o.SemiSyncSettable {
		return
	}
	names := make([]string, 0, len(o.Pods))
	pods := map[string]*corev1.Pod{}
	for i := range o.Pods {
		names = append(names, o.Pods[i].Name)
		pods[o.Pods[i].Name] = &o.Pods[i]
	}
	adj, changes := decideSemiSync(o.Cluster, names, o.Reports, d.leaving)
	for _, ch := range changes {
		d.SemiSyncParticipants = append(d.SemiSyncParticipants, SemiSyncParticipantTell{ParticipantChange: ch, Pod: pods[ch.Instance]})
		d.event(stepSemiSync, evSemiSyncParticipant.With(ch.Instance, ch.Participant, o.Cluster.Spec.MaxSyncReplicas))
	}
	primaryPod := pods[o.Cluster.Status.CurrentPrimary]
	if adj == nil || primaryPod == nil {
		return
	}
	adj.Pod = primaryPod
	d.SemiSync = adj
	d.event(stepSemiSync, evSemiSyncAdjusted.With(adj.Primary, adj.From, adj.To, adj.Healthy, adj.Replicas,
		o.Cluster.Spec.MySQL.SemiSync.DataDurability))
}

// decideSemiSync plans semi-sync over the replicas' health (semisync.PlanFor: preferred follows
// the healthy replicas, never below one; required pins minSyncReplicas; at most maxSyncReplicas
// participants, healthy first, then those that answer and follow the current primary or already
// acknowledge, never one that does not answer while another does) and returns the change to the primary's reported
// rpl_semi_sync_source_wait_for_replica_count (nil when none is needed) and the replicas whose
// reported rpl_semi_sync_replica_enabled differs from their participation
// (semisync.ParticipantChanges, those to start first). Nothing is decided while the primary has
// not reported. A replica that did not answer, is fenced, diverged, or whose replication threads
// are not both running without error is unhealthy; one that did not answer or is still
// bootstrapping is not told anything. leaving names the replica a rolling update is about to
// replace ("" for none): it acknowledges only when no other replica can (ReplicaHealth.Leaving).
func decideSemiSync(c *v1.Cluster, instances []string, reports map[string]*instanceclient.Status, leaving string) (*SemiSyncAdjustment, []semisync.ParticipantChange) {
	cfg := c.Spec.MySQL.SemiSync
	primary := c.Status.CurrentPrimary
	if cfg == nil || !cfg.Enabled || primary == "" {
		return nil, nil
	}
	pr := reports[primary]
	if pr == nil || pr.Role != v1.RolePrimary || pr.SemiSync == nil {
		return nil, nil
	}
	var replicas []semisync.ReplicaHealth
	acknowledging := map[string]bool{}
	healthy := 0
	for _, name := range instances {
		if name == primary {
			continue
		}
		st := reports[name]
		ok := replicaHealthy(c, name, st)
		if ok {
			healthy++
		}
		h := semisync.ReplicaHealth{Name: name, Healthy: ok, Leaving: name == leaving}
		if st != nil && st.Role == v1.RoleReplica && st.BootstrapDone() {
			acknowledging[name] = st.SemiSyncReplica != nil && st.SemiSyncReplica.Enabled
			h.Acknowledging = acknowledging[name]
			h.Answers = !slices.Contains(c.Status.FencedInstances, name) && !slices.Contains(c.Status.DivergedInstances, name)
			h.FollowsPrimary = st.Replication != nil && st.Replication.SourceInstance == primary
		}
		replicas = append(replicas, h)
	}
	plan := semisync.PlanFor(&c.Spec, replicas)
	changes := semisync.ParticipantChanges(plan, acknowledging)
	want := int32(plan.WaitForReplicaCount)
	if want == pr.SemiSync.WaitForReplicaCount {
		return nil, changes
	}
	return &SemiSyncAdjustment{Primary: primary, From: pr.SemiSync.WaitForReplicaCount, To: want,
		Healthy: healthy, Replicas: len(replicas)}, changes
}

func replicaHealthy(c *v1.Cluster, name string, st *instanceclient.Status) bool {
	if st == nil || st.Replication == nil || slices.Contains(c.Status.FencedInstances, name) ||
		slices.Contains(c.Status.DivergedInstances, name) {
		return false
	}
	r := st.Replication
	return r.IORunning && r.SQLRunning && r.LastError == ""
}

// setSemiSync applies the semi-sync decision through the instance managers' control API: the
// replicas that start acknowledging, then the primary's count, then the replicas that stop, so
// that the acknowledgers never drop below what the count needs while the participants change. It
// stops at the first failure, which is returned so the reconcile is retried.
func (r *Reconciler) setSemiSync(ctx context.Context, c *v1.Cluster, adj *SemiSyncAdjustment, tells []SemiSyncParticipantTell) error {
	if adj == nil && len(tells) == 0 {
		return nil
	}
	setter, ok := r.Instances.(instances.SemiSyncSetter)
	if !ok {
		return fmt.Errorf("setting semi-sync on %s: the status source cannot", c.Name)
	}
	tell := func(participant bool) error {
		for _, t := range tells {
			if t.Participant != participant || t.Pod == nil {
				continue
			}
			req := instanceclient.SemiSyncReplicaRequest{Participant: t.Participant}
			if err := setter.SetSemiSyncReplica(ctx, c, *t.Pod, req); err != nil {
				return fmt.Errorf("telling %s whether it acknowledges (participant %v): %w", t.Instance, t.Participant, err)
			}
		}
		return nil
	}
	if err := tell(true); err != nil {
		return err
	}
	if adj != nil {
		if err := setter.SetSemiSync(ctx, c, *adj.Pod, instanceclient.SemiSyncRequest{WaitForReplicaCount: adj.To}); err != nil {
			return fmt.Errorf("setting the acknowledgement count of %s to %d: %w", adj.Primary, adj.To, err)
		}
	}
	return tell(false)
}
