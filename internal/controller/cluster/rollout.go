package cluster

import (
	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// planRollout replaces, one Pod per reconcile, instances whose Pod runs an outdated spec (a new
// imageName, new resources, a new operator image). It acts only on a settled Cluster: no instance
// being created or removed, every instance ready, no primary change pending. Replicas go first,
// highest serial first; the Pod is deleted and recreated on its PVC. The primary of a
// multi-instance Cluster is not restarted by the operator: that needs a switchover (set
// status.targetPrimary to an updated replica), and Rollout says so. A single instance is restarted.
func (d *Decision) planRollout(c *v1.Cluster, o Observation, active []observedInstance) {
	primary := c.Status.CurrentPrimary
	if d.pending() || !allPodsReady(active) || primary == "" || primary != c.Status.TargetPrimary ||
		int32(len(active)) != c.Spec.Instances {
		return
	}
	primaryOutdated := false
	for i := len(active) - 1; i >= 0; i-- {
		in := active[i]
		want := specs.BuildPod(c, in.Serial, specs.PodOptions{OperatorImage: o.OperatorImage})
		if in.Pod.Annotations[specs.PodSpecHashAnnotation] == want.Annotations[specs.PodSpecHashAnnotation] {
			continue
		}
		if in.Name == primary && len(active) > 1 {
			primaryOutdated = true
			continue
		}
		if foreign := foreignInstanceObjects(c, o, in.Name); len(foreign) > 0 {
			// Its new Pod would be refused (refuseForeignInstance): keep the one it has.
			d.RefusedObjects = append(d.RefusedObjects, foreign...)
			continue
		}
		d.DeletePods = append(d.DeletePods, in.Name)
		d.event(stepDeletePods, evInstanceUpdating.With(in.Name))
		return
	}
	if primaryOutdated {
		d.Rollout = "every replica runs the new spec; the primary " + primary +
			" keeps the old one until a switchover to an updated replica"
	}
}
