package cluster

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// rolloutWait says why a rolling update waits, or which step of the primary's update is under
// way: the Progressing condition's reason and message.
type rolloutWait struct {
	Reason, Message string
}

// planRollout replaces, one Pod per reconcile, instances whose Pod runs an outdated spec (a new
// imageName, new resources, a new operator image). It acts only on a settled Cluster: no instance
// being created or removed, every instance ready, no primary change pending, no failover recorded.
// Replicas go first, highest serial first; the Pod is deleted and recreated on its PVC. Once every
// replica runs the new spec, the primary of several instances is updated as
// primaryUpdateStrategy and primaryUpdateMethod say (planPrimaryUpdate); a single instance is
// restarted.
func (d *Decision) planRollout(c *v1.Cluster, o Observation, active []observedInstance) {
	primary := c.Status.CurrentPrimary
	if why := refusedReplacements(o); why != "" {
		d.Rollout = &rolloutWait{reasonRollingUpdate, why}
		// Once per refusal, not per reconcile: the Warnings of one Cluster share the recorder's
		// rate limit, and a held rollout must not crowd out the others.
		if prev := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionProgressing); prev == nil || prev.Message != why {
			for name, msg := range o.RefusedReplacements {
				d.event(stepStatus, evInstanceRefused.With("the new Pod of", name, msg))
			}
		}
		return
	}
	if d.replaceRefusedStart(c, o, active) {
		return
	}
	if d.pending() || !allPodsReady(active) || primary == "" || primary != c.Status.TargetPrimary ||
		c.Status.PrimaryFailingSince != nil || int32(len(active)) != c.Spec.Instances {
		return
	}
	primaryOutdated := false
	updated := map[string]bool{}
	var refused []string
	for i := len(active) - 1; i >= 0; i-- {
		in := active[i]
		if !podOutdated(c, o, in) {
			updated[in.Name] = true
			continue
		}
		if in.Name == primary && len(active) > 1 {
			primaryOutdated = true
			continue
		}
		if foreign := foreignInstanceObjects(c, o, in.Name); len(foreign) > 0 {
			// Its new Pod would be refused (refuseForeignInstance): keep the one it has.
			d.RefusedObjects = append(d.RefusedObjects, foreign...)
			refused = append(refused, in.Name)
			continue
		}
		if in.Name == primary {
			// A single instance: restarted in place, as primaryUpdateMethod restart does.
			d.planPrimaryRestart(c, o, in)
			return
		}
		if d.replaceReplica(c, o, active, in) {
			d.event(stepDeletePods, updatingEvent(c, o, in))
		}
		return
	}
	switch {
	case !primaryOutdated:
		if !d.planResize(c, o, active) {
			d.planManagerUpdate(c, o, active)
		}
	case len(refused) > 0:
		d.Rollout = &rolloutWait{reasonPrimaryUpdatePending, "the primary " + primary +
			" is updated once every replica runs the new spec; not updated: " + strings.Join(refused, ", ")}
	default:
		for _, in := range active {
			if in.Name == primary {
				d.planPrimaryUpdate(c, o, in, func(name string) bool { return updated[name] })
			}
		}
	}
}

// replaceReplica deletes the Pod of the replica in (recreated on its PVC with the current spec)
// once its semi-sync acknowledgements are handed over to another replica and commits do not need
// it; until then it says in d.Rollout what it waits for. It reports whether the Pod is deleted.
func (d *Decision) replaceReplica(c *v1.Cluster, o Observation, active []observedInstance, in observedInstance) bool {
	d.leaving = in.Name
	if to := d.acknowledgementsToHandOver(o); to != "" {
		d.Rollout = &rolloutWait{reasonRollingUpdate, "handing the semi-sync acknowledgements of " + in.Name +
			" over to " + to + " before replacing it"}
		return false
	}
	if why := semiSyncUncoveredWithout(c, o, active, in.Name); why != "" {
		d.Rollout = &rolloutWait{reasonRollingUpdate, "replacing " + in.Name + " once commits do not need it: " + why}
		return false
	}
	d.DeletePods = append(d.DeletePods, in.Name)
	return true
}

// replaceRefusedStart replaces, one at a time, the Pod of an instance whose manager refused to
// start mysqld (a version downgrade MySQL does not support) once the Cluster asks for another
// spec: setting imageName back must recover it, and the rollout's wait for every instance to be
// ready would wait for ever on a Pod that never becomes ready. It serves nothing, so replacing it
// takes nothing away.
func (d *Decision) replaceRefusedStart(c *v1.Cluster, o Observation, active []observedInstance) bool {
	if d.pending() {
		return false
	}
	for _, in := range active {
		if in.Pod == nil || in.Pod.DeletionTimestamp != nil || refusedStart(in.Pod) == "" || !specOutdated(c, o, in) {
			continue
		}
		d.DeletePods = append(d.DeletePods, in.Name)
		d.event(stepDeletePods, evInstanceUpdating.With(in.Name))
		return true
	}
	return false
}

// podOutdated reports whether in's Pod runs a spec other than the one the Cluster asks for, or
// its mysqld waits for a restart to take a parameter (status.parameters.pendingRestart).
func podOutdated(c *v1.Cluster, o Observation, in observedInstance) bool {
	return specOutdated(c, o, in) || len(pendingRestart(c, o, in.Name)) > 0
}

func specOutdated(c *v1.Cluster, o Observation, in observedInstance) bool {
	want := specs.BuildPod(c, in.Serial, specs.PodOptions{OperatorImage: o.OperatorImage})
	return in.Pod.Annotations[specs.PodSpecHashAnnotation] != want.Annotations[specs.PodSpecHashAnnotation]
}

// updatingEvent says why in's Pod is replaced: a new spec, or parameters that need a restart.
func updatingEvent(c *v1.Cluster, o Observation, in observedInstance) kit.Event {
	if p := pendingRestart(c, o, in.Name); len(p) > 0 && !specOutdated(c, o, in) {
		return evInstanceRestarting.With(in.Name, strings.Join(p, ", "))
	}
	return evInstanceUpdating.With(in.Name)
}

// acknowledgementsToHandOver names the replicas still to be told to acknowledge, or to stop, before
// the replica d.leaving may go: with it ranked last, the semi-sync participants change (another
// replica starts acknowledging before it stops), and its Pod is deleted only once nothing is left
// to change, so that commits never wait for a replica that is restarting while another could have
// acknowledged them. "" when nothing needs telling, or when the operator cannot tell replicas.
func (d *Decision) acknowledgementsToHandOver(o Observation) string {
	if !o.SemiSyncSettable {
		return ""
	}
	names := make([]string, 0, len(o.Pods))
	for i := range o.Pods {
		names = append(names, o.Pods[i].Name)
	}
	_, changes := decideSemiSync(o.Cluster, names, o.Reports, d.leaving)
	var out []string
	for _, ch := range changes {
		if ch.Participant {
			out = append(out, ch.Instance)
		}
	}
	if len(changes) > 0 && len(out) == 0 {
		out = append(out, "the other replicas")
	}
	return strings.Join(out, ", ")
}

// semiSyncUncoveredWithout says why commits on the primary would wait for acknowledgements if
// replica leaving went now, or "" when they would not: semi-sync is off, or at least the primary's
// acknowledgement count of the other replicas receive from it with their semi-sync channel on
// (Rpl_semi_sync_replica_status), or fewer other replicas exist than the count (a two-instance
// Cluster under required: its commits wait for the replica's return whatever the order). Right
// after a switchover, say, the replicas are still repointing: replacing one then would leave the
// new primary's commits without an acknowledger until the fallback.
func semiSyncUncoveredWithout(c *v1.Cluster, o Observation, active []observedInstance, leaving string) string {
	ss := c.Spec.MySQL.SemiSync
	primary := c.Status.CurrentPrimary
	if ss == nil || !ss.Enabled || !o.SemiSyncSettable {
		return ""
	}
	pr := o.Reports[primary]
	if pr == nil || pr.SemiSync == nil {
		return "the primary " + primary + " has not reported its semi-sync state"
	}
	need := int(pr.SemiSync.WaitForReplicaCount)
	if others := len(active) - 2; others < need {
		return ""
	}
	acking := 0
	for _, in := range active {
		st := o.Reports[in.Name]
		if in.Name == primary || in.Name == leaving || st == nil || st.Replication == nil || st.SemiSyncReplica == nil {
			continue
		}
		r := st.Replication
		if r.SourceInstance == primary && r.IORunning && st.SemiSyncReplica.Enabled && st.SemiSyncReplica.Active {
			acking++
		}
	}
	if acking < need {
		return fmt.Sprintf("%d other replica(s) acknowledge commits of %s, %d needed", acking, primary, need)
	}
	return ""
}
