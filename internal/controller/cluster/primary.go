package cluster

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// planTargetPrimary sets targetPrimary when it is empty: on creation (no instance existed before
// this reconcile) the first instance; otherwise the current primary, or the one instance that
// reports itself primary. When none or several do (a status lost in a restore, say), it sets
// nothing rather than guess: promoting a stale replica could lose writes. PrimaryUnknown is set.
func (d *Decision) planTargetPrimary(c *v1.Cluster, o Observation, active []observedInstance, created bool) {
	if c.Status.TargetPrimary != "" || len(active) == 0 {
		return
	}
	target := c.Status.CurrentPrimary
	if target == "" && created {
		target = active[0].Name
	}
	if target == "" {
		var reporting []string
		for _, in := range active {
			if r := o.Reports[in.Name]; r != nil && r.Role == v1.RolePrimary {
				reporting = append(reporting, in.Name)
			}
		}
		if len(reporting) != 1 {
			d.PrimaryUnknown = true
			return
		}
		target = reporting[0]
	}
	c.Status.TargetPrimary = target
	t := metav1.NewTime(o.Now)
	c.Status.TargetPrimaryTimestamp = &t
	d.event(stepStatus, evTargetPrimarySet.With(target))
}
