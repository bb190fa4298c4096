package cluster

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// reasonFencingInvalid is the Degraded reason of a fencing annotation that cannot be read.
const reasonFencingInvalid = "InvalidFencingAnnotation"

// planFencing mirrors the Cluster's fencing annotation (the user's request, edited by the
// plugin's `fence on|off`) into status.fencedInstances, "*" expanded to every active instance,
// sorted. The instances read that list (a fenced one holds itself read-only and releases the
// primary Lease), the labels follow it (a fenced instance is not routable) and the failover
// engine never promotes a fenced instance. A malformed annotation keeps the current list: a typo
// must not unfence anyone. It is reported by FencingInvalid (the Degraded condition) and a
// Warning Event when it first appears.
func (d *Decision) planFencing(c *v1.Cluster, active []observedInstance) {
	requested, err := c.FencedInstancesRequested()
	if err != nil {
		d.FencingInvalid = err.Error()
		if old := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionDegraded); old == nil || old.Reason != reasonFencingInvalid {
			d.event(stepStatus, evFencingInvalid.With(err.Error()))
		}
		return
	}
	fenced := requested
	if slices.Contains(requested, v1.FenceAllInstances) {
		fenced = make([]string, 0, len(active))
		for _, in := range active {
			fenced = append(fenced, in.Name)
		}
	}
	if len(fenced) == 0 {
		fenced = nil
	}
	for _, name := range fenced {
		if !slices.Contains(c.Status.FencedInstances, name) {
			d.event(stepStatus, evFenced.With(name))
		}
	}
	for _, name := range c.Status.FencedInstances {
		if !slices.Contains(fenced, name) {
			d.event(stepStatus, evUnfenced.With(name))
		}
	}
	c.Status.FencedInstances = fenced
}

// fencingAnnotationChanged passes Cluster updates that change the fencing annotation: it is
// metadata, so the generation does not move.
func fencingAnnotationChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetAnnotations()[v1.FencedInstancesAnnotation] != e.ObjectNew.GetAnnotations()[v1.FencedInstancesAnnotation]
	}}
}
