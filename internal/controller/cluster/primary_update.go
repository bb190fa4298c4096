package cluster

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// primaryUpdateRetryDelay is how long an unsupervised update waits after an aborted switchover
// (a target that did not catch up within maxSwitchoverDelay, an old primary that could not be
// demoted) before it starts another one: each attempt stops the primary's writes for a moment.
const primaryUpdateRetryDelay = 5 * time.Minute

// plannedRestartDeleteWindow is how soon after the restart of the primary was recorded its Pod may
// be deleted: the record holds failovers back for failover.PlannedRestartBudget from then, so an
// older record is written anew rather than acted on. plannedRestartAbandonAfter is when a record
// whose Pod is still seen undeleted is dropped: later than the window, so that a deletion made at
// its end and not yet in the cache never loses its record.
const (
	plannedRestartDeleteWindow = 20 * time.Second
	plannedRestartAbandonAfter = time.Minute
)

// planPrimaryUpdate updates the primary of several instances once every replica runs the new
// spec, the Cluster otherwise settled (planRollout). Supervised, it waits for a person to promote
// an updated replica. Unsupervised with the switchover method, it sets targetPrimary to the most
// advanced updated replica (failover.UpdateTarget), as the plugin's promote does: the switchover
// engine then demotes the primary only once the target holds everything it wrote, and the old
// primary, a replica afterwards, is updated as one. With the restart method, it restarts the
// primary's Pod in place (planPrimaryRestart).
func (d *Decision) planPrimaryUpdate(c *v1.Cluster, o Observation, in observedInstance, updated func(string) bool) {
	primary := c.Status.CurrentPrimary
	if c.Spec.PrimaryUpdateStrategy == v1.PrimaryUpdateSupervised {
		d.Rollout = &rolloutWait{reasonPrimaryUpdateSupervised, fmt.Sprintf(
			"every replica runs the new spec; primaryUpdateStrategy is supervised: the primary %s is updated once a person "+
				"promotes an updated replica (kubectl cnmysql promote %s INSTANCE)", primary, c.Name)}
		return
	}
	if c.Spec.PrimaryUpdateMethod == v1.PrimaryUpdateRestart {
		d.planPrimaryRestart(c, o, in)
		return
	}
	if at, ok := switchoverAbortedAt(c.Status); ok && o.Now.Before(at.Add(primaryUpdateRetryDelay)) {
		d.Rollout = &rolloutWait{reasonPrimaryUpdatePending, fmt.Sprintf(
			"every replica runs the new spec; the last switchover from %s was aborted at %s, the one that updates it starts at %s",
			primary, at.UTC().Format(time.RFC3339), at.Add(primaryUpdateRetryDelay).UTC().Format(time.RFC3339))}
		return
	}
	if fd := d.Failover.Decision; fd.Kind != failover.Nothing {
		d.Rollout = &rolloutWait{reasonPrimaryUpdatePending, "every replica runs the new spec; the switchover that updates the primary " +
			primary + " waits: " + fd.Reason}
		return
	}
	target, why := failover.UpdateTarget(d.failoverObservation, updated)
	if target == "" {
		d.Rollout = &rolloutWait{reasonPrimaryUpdatePending, "every replica runs the new spec; the switchover that updates the primary " +
			primary + " waits: " + why}
		return
	}
	now := metav1.NewTime(o.Now)
	c.Status.TargetPrimary, c.Status.TargetPrimaryTimestamp, c.Status.TargetPrimaryCatchUp = target, &now, nil
	d.Rollout = &rolloutWait{reasonPrimaryUpdateSwitchover, fmt.Sprintf(
		"every replica runs the new spec: switching over from %s to %s, the most advanced updated replica, then updating %s",
		primary, target, primary)}
	d.event(stepStatus, evPrimaryUpdateSwitchover.With(primary, target))
}

// switchoverAbortedAt is when the last primary change was aborted: targetPrimary was set back to
// the current primary after it became primary.
func switchoverAbortedAt(st v1.ClusterStatus) (time.Time, bool) {
	if st.TargetPrimaryTimestamp == nil || st.CurrentPrimaryTimestamp == nil || st.TargetPrimary != st.CurrentPrimary {
		return time.Time{}, false
	}
	return st.TargetPrimaryTimestamp.Time, st.TargetPrimaryTimestamp.After(st.CurrentPrimaryTimestamp.Time)
}

// planPrimaryRestart restarts the primary's Pod in place on its PVC, in two reconciles: the first
// records the restart in status.primaryRestart (which holds failovers back for
// failover.PlannedRestartBudget), the second, seeing it recorded for this very Pod and recently
// enough, deletes the Pod. The record is written before the deletion, so no reconcile can see the
// primary's Pod going without it and fail over.
func (d *Decision) planPrimaryRestart(c *v1.Cluster, o Observation, in observedInstance) {
	r := c.Status.PrimaryRestart
	if r == nil || r.Instance != in.Name || r.PodUID != string(in.Pod.UID) || !o.Now.Before(r.RequestedAt.Add(plannedRestartDeleteWindow)) {
		c.Status.PrimaryRestart = &v1.PrimaryRestart{Instance: in.Name, PodUID: string(in.Pod.UID), RequestedAt: metav1.NewTime(o.Now)}
		d.Rollout = &rolloutWait{reasonPrimaryUpdateRestart, fmt.Sprintf(
			"every replica runs the new spec: restarting the primary %s in place (its Pod is deleted and recreated on its volume)", in.Name)}
		return
	}
	d.DeletePods = append(d.DeletePods, in.Name)
	d.event(stepDeletePods, evPrimaryRestarting.With(in.Name))
}

// clearPrimaryRestart forgets a recorded restart of the primary once it is over: the instance is
// no longer the current primary, the budget has passed, or a new Pod (another UID) is ready and
// its mysqld answers as the writable primary.
func clearPrimaryRestart(c *v1.Cluster, o Observation, active []observedInstance) {
	r := c.Status.PrimaryRestart
	if r == nil {
		return
	}
	pod := podOf(active, r.Instance)
	rep := o.Reports[r.Instance]
	back := pod != nil && string(pod.UID) != r.PodUID && instances.PodReady(pod) &&
		rep != nil && rep.Role == v1.RolePrimary && !rep.ReadOnly
	// The deletion never came (the rollout stopped waiting on something else): the record goes
	// once it could no longer be acted on.
	abandoned := pod != nil && string(pod.UID) == r.PodUID && pod.DeletionTimestamp == nil &&
		!o.Now.Before(r.RequestedAt.Add(plannedRestartAbandonAfter))
	if back || abandoned || r.Instance != c.Status.CurrentPrimary || !o.Now.Before(r.RequestedAt.Add(failover.PlannedRestartBudget)) {
		c.Status.PrimaryRestart = nil
	}
}
