package failover

import (
	"fmt"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// decideSwitchover runs a planned switchover from status.currentPrimary to status.targetPrimary:
// validate the target, wait for it to hold the primary's observed GTID set, demote the old
// primary while it is reachable, then let the target promote once the old primary is seen
// read-only or its Lease has expired, with the set it must have executed first. When that cannot
// happen within maxSwitchoverDelay (counted from targetPrimaryTimestamp), the switchover is
// aborted: targetPrimary goes back to the old primary, which resumes.
//
// For the GTID check before demotion to mean anything, the caller reads the old primary's status
// before the target's: what the target received is then in the primary's set or after it.
func decideSwitchover(o Observation) Decision {
	st := o.Status
	p, t := st.CurrentPrimary, st.TargetPrimary
	old, _ := o.instance(p)
	ti, tseen := o.instance(t)
	deadline := o.Now.Add(o.Spec.MaxSwitchoverDelay)
	if !st.TargetPrimaryTimestamp.IsZero() {
		deadline = st.TargetPrimaryTimestamp.Add(o.Spec.MaxSwitchoverDelay)
	}
	late := !o.Now.Before(deadline)
	poll := o.Now.Add(PollInterval)
	if !late {
		poll = minTime(deadline, poll)
	}
	wait := func(reason string) Decision {
		return Decision{Kind: Wait, Operation: SwitchoverOperation, Until: poll,
			Reason: fmt.Sprintf("switchover from %s to %s: %s", p, t, reason)}
	}
	abort := func(reason string) Decision {
		reason = fmt.Sprintf("switchover from %s to %s aborted: %s", p, t, reason)
		if tseen && !o.provablyNotWritable(ti, tseen) {
			return Decision{Kind: Blocked, Operation: SwitchoverOperation,
				Reason: reason + "; but without the primary Lease it cannot be told whether " + t + " promoted, so " + p + " does not resume yet"}
		}
		return Decision{Kind: Blocked, Operation: SwitchoverOperation, Step: StepAbortSwitchover, Instance: p, Reason: reason}
	}
	if tseen && o.promoting(ti) {
		return wait("waiting for " + t + " to finish its promotion")
	}
	if !tseen {
		return abort("the target does not exist")
	}
	if old.SeenWritable() {
		// Before the demotion: the target must be a healthy replica of p holding its set.
		if why := o.switchoverIneligible(ti, p, true, false); why != "" {
			return abort("the target is " + why)
		}
		if errant := errantOf(ti, old.Executed); !errant.IsEmpty() {
			return abort(fmt.Sprintf("the target has transactions %s never had (%s)", p, errant))
		}
		if missing := old.Executed.Subtract(ti.History()); !missing.IsEmpty() {
			if late {
				return abort(fmt.Sprintf("the target did not catch up within maxSwitchoverDelay (%s); missing %s", o.Spec.MaxSwitchoverDelay, missing))
			}
			return wait(fmt.Sprintf("the target catches up before %s is demoted (missing %s)", p, missing))
		}
		return Decision{Kind: Switchover, Operation: SwitchoverOperation, Step: StepDemote, Instance: p,
			Reason: fmt.Sprintf("switchover from %s to %s: demote %s", p, t, p)}
	}
	if !old.SeenReadOnly() && !(o.Spec.EnablePrimaryLease && !LeaseLiveFor(o.Lease, t, o.Now)) {
		// Neither seen read-only nor out of its Lease: the old primary may still write.
		switch {
		case late:
			return abort(fmt.Sprintf("%s was neither seen read-only nor out of its Lease within maxSwitchoverDelay (%s)", p, o.Spec.MaxSwitchoverDelay))
		case old.Reachable:
			return Decision{Kind: Switchover, Operation: SwitchoverOperation, Step: StepDemote, Instance: p,
				Reason: fmt.Sprintf("switchover from %s to %s: demote %s", p, t, p)}
		case o.Spec.EnablePrimaryLease:
			return wait(fmt.Sprintf("%s does not answer; its Lease, held by %s, expires at %s", p, o.Lease.Holder,
				LeaseExpiry(o.Lease).UTC().Format(time.RFC3339)))
		}
		return wait(p + " does not answer, and without the primary Lease only seeing it read-only proves it stopped writing")
	}
	// The old primary accepts no more writes. Re-check the target against what it must hold,
	// known once no commit of the old primary waits for an acknowledgement.
	ackWait := old.SeenReadOnly() && old.AckWaiters > 0
	var need gtid.Set
	var source string
	if !ackWait {
		need, source = o.switchoverNeed(old, t)
	}
	// Drained too: a target that still has received transactions to apply needs its applier,
	// and one whose applier failed must be refused, not promoted for ever.
	holdsAll := !ackWait && ti.Executed.Contains(union(need, ti.Retrieved))
	if why := o.switchoverIneligible(ti, p, false, holdsAll); why != "" {
		if !ti.Reachable || !ti.PodReady {
			if late {
				return abort("the target is " + why)
			}
			return wait("the target is " + why)
		}
		return abort("the target is " + why)
	}
	if ackWait {
		// With the AFTER_SYNC wait point those commits are in its binary log, perhaps on a replica,
		// but not yet in its gtid_executed: its final set is not known until they end.
		if late {
			return abort(fmt.Sprintf("%d commits on %s still wait for semi-sync acknowledgements after maxSwitchoverDelay (%s)", old.AckWaiters, p, o.Spec.MaxSwitchoverDelay))
		}
		return wait(fmt.Sprintf("%d commits on %s still wait for semi-sync acknowledgements; its final GTID set is not known yet", old.AckWaiters, p))
	}
	if errant := errantOf(ti, need); old.SeenReadOnly() && !errant.IsEmpty() {
		return abort(fmt.Sprintf("the target has transactions %s never had (%s)", p, errant))
	}
	if missing := need.Subtract(ti.History()); !missing.IsEmpty() {
		if !old.SeenReadOnly() {
			return abort(fmt.Sprintf("%s holds transactions the target lacks (%s) and %s, which could send them, does not answer: a less advanced replica is never promoted", source, missing, p))
		}
		if late {
			return abort(fmt.Sprintf("the target did not catch up within maxSwitchoverDelay (%s); missing %s", o.Spec.MaxSwitchoverDelay, missing))
		}
		return wait(fmt.Sprintf("the target receives what %s holds (missing %s)", source, missing))
	}
	if late && !ti.Executed.Contains(need) {
		return abort(fmt.Sprintf("the target did not apply what it received within maxSwitchoverDelay (%s)", o.Spec.MaxSwitchoverDelay))
	}
	if !old.SeenReadOnly() && old.PodExists && !old.PodDeleting {
		// Its Lease expired, but its Pod runs: its instance manager may be frozen while its mysqld
		// takes writes that the replicas still acknowledge. A switchover neither stops their
		// receivers nor fences that mysqld; the failover that follows the abort does both first.
		return abort(fmt.Sprintf("%s does not answer and its Pod still runs: its mysqld may still take acknowledged writes; a failover replaces it, fencing it first", p))
	}
	return Decision{Kind: Switchover, Operation: SwitchoverOperation, Step: StepPromote, Instance: t, CatchUp: need,
		Reason: fmt.Sprintf("switchover from %s to %s: %s accepts no more writes; promote %s once it has executed %s",
			p, t, p, t, quoteEmpty(need.String()))}
}

// switchoverIneligible returns why in may not become primary in a switchover from p, or "".
// Before the demotion (strict) it must also replicate from p with both threads running (the
// receiver may be connecting: the catch-up check waits for it) and no error: a replica that
// does not receive from the primary will not catch up. After it, a target that has executed all
// it must hold (holdsAll) is eligible whatever its replication threads: it stops and resets them
// to promote itself.
func (o *Observation) switchoverIneligible(in Instance, p string, strict, holdsAll bool) string {
	r := in.Replication
	switch {
	case in.Name == p:
		return "the current primary"
	case o.fenced(in.Name):
		return "fenced"
	case o.diverged(in.Name):
		return "diverged"
	case !in.PodExists || in.PodDeleting:
		return "without a Pod, or its Pod is being deleted"
	case !in.PodReady:
		return "not ready"
	case !in.Reachable:
		return "not answering"
	case !in.SuperReadOnly:
		return "not read-only"
	case holdsAll:
		// Its replication no longer matters: it stops and resets it to promote itself, right
		// before it takes the Lease and turns writable.
		return ""
	case r == nil:
		return "not replicating"
	case !r.SQLRunning || r.SQLLastError != "":
		return "not applying (SQL thread stopped or failed: " + quoteEmpty(r.SQLLastError) + ")"
	case strict && (r.Source != p || !r.IOActive() || r.IOLastError != ""):
		return "not receiving from " + p + " (source " + quoteEmpty(r.Source) + ", IO error " + quoteEmpty(r.IOLastError) + ")"
	}
	return ""
}

// switchoverNeed is the GTID set the target must hold before it is promoted, and who holds it:
// when the old primary is seen read-only, what it wrote: its final gtid_executed, plus what the
// other replicas received from it (in its binary log, even if a commit's acknowledgement was still
// awaited when its gtid_executed was read); else everything the other replicas that answered hold
// (so no less advanced target is promoted).
func (o *Observation) switchoverNeed(old Instance, target string) (gtid.Set, string) {
	if old.SeenReadOnly() {
		need := old.Executed
		for _, in := range o.Instances {
			if in.Name == old.Name || in.Name == target || !in.Reachable || o.diverged(in.Name) ||
				in.Replication == nil || in.Replication.Source != old.Name {
				continue
			}
			need = union(need, in.Retrieved)
		}
		return need, old.Name
	}
	need, source := gtid.Set{}, ""
	for _, in := range o.Instances {
		if in.Name == old.Name || in.Name == target || !in.Reachable || o.diverged(in.Name) {
			continue
		}
		h := in.History()
		if !need.Contains(h) {
			need, source = union(need, h), in.Name
		}
	}
	return need, source
}

// errantOf returns what in executed that is neither in source nor received by its channel: the
// transactions the source never had.
func errantOf(in Instance, source gtid.Set) gtid.Set {
	return gtid.Errant(in.Executed, source).Subtract(in.Retrieved)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
