package cluster

import (
	"fmt"
	"maps"
	"slices"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// managerUpdateSettle is how long after sending an instance its new instance manager the
// operator waits for it to report running it before sending it again (it replaces its program a
// second after it answered).
const managerUpdateSettle = 30 * time.Second

// reasonManagerUpdate is the Progressing reason while instance managers are updated in place.
const reasonManagerUpdate = "InstanceManagerUpdate"

// planManagerUpdate brings every instance manager to the operator's own binary once the Cluster
// runs its spec (planRollout calls it when nothing else is to do): one instance per reconcile,
// replicas first (highest serial first), the primary last, each in place: the instance takes
// the binary over the control API, checks it and replaces its program, mysqld keeps running, so
// no Pod restarts and no switchover happens. An instance that cannot take it in place (its
// report says why) has its Pod replaced as a rolling update does, the primary as
// primaryUpdateStrategy and primaryUpdateMethod say. It waits while any instance does not
// answer, and for 30 s after sending an instance its binary, for it to report running it.
// Instance managers that predate in-place updates report no binary and are left alone: their
// Pods, built with the operator's image in the Pod hash, are replaced by the rolling update.
func (d *Decision) planManagerUpdate(c *v1.Cluster, o Observation, active []observedInstance) {
	bin := o.ManagerBinary
	if bin == nil {
		return
	}
	for _, in := range active {
		if o.Reports[in.Name] == nil {
			for _, other := range active {
				if r := o.Reports[other.Name]; r != nil && r.Manager != nil && r.Manager.SHA256 != bin.SHA256 {
					d.Rollout = &rolloutWait{reasonManagerUpdate, "the instance managers are updated once " + in.Name + " answers"}
					break
				}
			}
			return
		}
	}
	runs := func(name string) bool {
		r := o.Reports[name]
		return r != nil && r.Manager != nil && r.Manager.SHA256 == bin.SHA256
	}
	order := updateOrder(active, c.Status.CurrentPrimary)
	done := 0
	for _, in := range order {
		if runs(in.Name) {
			done++
		}
	}
	for _, in := range order {
		m := o.Reports[in.Name].Manager
		switch {
		case m == nil || m.SHA256 == bin.SHA256:
			continue
		case m.SHA256 == "" && !m.InPlaceUpdate:
			// No sum and no in-place update (its binary could not be read): left alone, the
			// others go on.
			continue
		case m.SHA256 == "":
			// Still hashing its binary (a second after a start): wait, so that the order holds.
			d.Rollout = &rolloutWait{reasonManagerUpdate, fmt.Sprintf(
				"waiting for %s to report its instance manager (%d of %d instances run %s)", in.Name, done, len(active), bin.Version)}
			return
		}
		try, tried := o.ManagerUpdatesSent[in.Name]
		switch {
		case !m.InPlaceUpdate || (tried && try.Refusals >= managerUpdateRefusalsBeforeReplace):
			why := m.NoInPlaceUpdate
			if m.InPlaceUpdate {
				why = fmt.Sprintf("it refused the binary %d times", try.Refusals)
			}
			d.replaceForManager(c, o, active, in, why, runs)
			return
		case tried && try.Failed && o.Now.Before(try.At.Add(managerUpdateBackoff(try.Failures))):
			d.Rollout = &rolloutWait{reasonManagerUpdate, fmt.Sprintf(
				"the update of the instance manager of %s failed %d time(s); the next attempt is at %s (%d of %d instances run %s)",
				in.Name, try.Failures, try.At.Add(managerUpdateBackoff(try.Failures)).UTC().Format(time.RFC3339), done, len(active), bin.Version)}
			return
		case tried && !try.Failed && o.Now.Sub(try.At) < managerUpdateSettle:
			d.Rollout = &rolloutWait{reasonManagerUpdate, fmt.Sprintf(
				"waiting for %s to run instance manager %s (%d of %d instances run it); mysqld keeps running",
				in.Name, bin.Version, done, len(active))}
			return
		}
		d.UpdateManager = in.Name
		d.Rollout = &rolloutWait{reasonManagerUpdate, fmt.Sprintf(
			"updating the instance manager of %s in place from %s to %s (%d of %d instances run it); mysqld keeps running",
			in.Name, describeManager(m.Version, m.SHA256), bin.Version, done, len(active))}
		return
	}
}

// managerUpdateRefusalsBeforeReplace is how many times an instance may refuse the binary (its
// answer says it does not run there, or it cannot replace its program) before its Pod is
// replaced instead, as a rolling update does.
const managerUpdateRefusalsBeforeReplace = 3

// managerUpdateBackoff is how long after the failures-th failed sending the next one waits: 30 s,
// doubling, at most 5 minutes.
func managerUpdateBackoff(failures int) time.Duration {
	d := 30 * time.Second
	for i := 1; i < failures && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

// replaceForManager replaces the Pod of in, whose instance manager cannot be updated in place:
// its new Pod copies the manager from the operator's image. A replica goes as in a rolling
// update (its semi-sync acknowledgements handed over first); the primary as the primary of a
// rolling update does, once every replica runs the operator's manager.
func (d *Decision) replaceForManager(c *v1.Cluster, o Observation, active []observedInstance, in observedInstance,
	why string, runs func(string) bool) {
	if in.Name == c.Status.CurrentPrimary {
		if len(active) > 1 {
			d.planPrimaryUpdate(c, o, in, runs)
		} else {
			d.planPrimaryRestart(c, o, in)
		}
		return
	}
	if d.replaceReplica(c, o, active, in) {
		d.event(stepDeletePods, evManagerReplacing.With(in.Name, why))
	}
}

// managerUpdatedEvents reports each instance seen running the operator's binary after it ran
// another (status.instanceManagers before and after this reconcile).
func (d *Decision) managerUpdatedEvents(o Observation) {
	if o.ManagerBinary == nil {
		return
	}
	names := slices.Sorted(maps.Keys(d.Status.InstanceManagers))
	for _, name := range names {
		m := d.Status.InstanceManagers[name]
		prev, ok := o.Cluster.Status.InstanceManagers[name]
		if ok && prev.SHA256 != m.SHA256 && m.SHA256 == o.ManagerBinary.SHA256 {
			d.event(stepStatus, evManagerUpdated.With(name, describeManager(m.Version, m.SHA256)))
		}
	}
}

// describeManager names an instance manager's binary: its version and the start of its sha256.
func describeManager(version, sum string) string {
	return fmt.Sprintf("%s (sha256 %.12s)", version, sum)
}
