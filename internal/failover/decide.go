package failover

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// Decide returns the single next step for the Cluster observed in o. With no established primary
// (bootstrap) it does nothing. While status.targetPrimary differs from status.currentPrimary a
// primary change is under way: the promotion of a failover (primaryFailingSince is set and the
// old primary's Pod is gone or going) or a planned switchover. Otherwise it watches the primary's health, and fails over once it has kept
// failing for failoverDelay.
func Decide(o Observation) Decision {
	st := o.Status
	if writers := o.writable(); len(writers) > 1 {
		return Decision{Kind: Blocked, Instances: writers,
			Reason: "several instances accept writes: " + strings.Join(writers, ", ") + "; nothing is promoted or resumed until a human fences all but one"}
	}
	switch {
	case st.CurrentPrimary == "":
		return Decision{Kind: Nothing, Reason: "no established primary yet"}
	case st.TargetPrimary == "":
		return Decision{Kind: Nothing, Reason: "no target primary yet"}
	case st.TargetPrimary != st.CurrentPrimary && o.FailoverUnderWay():
		return guardPromotion(o, decideFailoverPromotion(o))
	case st.TargetPrimary != st.CurrentPrimary:
		return guardPromotion(o, decideSwitchover(o))
	}
	return guardPromotion(o, decideSteady(o))
}

// FailoverUnderWay: a failover, not a switchover, moved targetPrimary. A failover records
// primaryFailingSince first and deletes the old primary's Pod, which is not recreated meanwhile,
// before it names the target (the operator holds that Pod until the promotion ends, even while
// it is blocked). A targetPrimary set while the old primary's Pod still runs is a
// switchover, which can be aborted, even when a primaryFailingSince of a moment ago is still
// recorded (the old primary turns read-only as soon as targetPrimary moves away from it, so a
// switchover aborted and asked again within a second finds it recorded failing).
func (o *Observation) FailoverUnderWay() bool {
	old, seen := o.instance(o.Status.CurrentPrimary)
	return !o.Status.PrimaryFailingSince.IsZero() && (!seen || !old.PodExists || old.PodDeleting)
}

// writable lists the instances seen accepting writes.
func (o *Observation) writable() []string {
	var out []string
	for _, in := range o.Instances {
		if in.SeenWritable() {
			out = append(out, in.Name)
		}
	}
	return out
}

// guardPromotion is the last check before any step that lets an instance become writable: no
// other instance may be seen accepting writes. The rules above already ensure it; this keeps a
// mistake in them from ever producing two writers.
func guardPromotion(o Observation, d Decision) Decision {
	if d.Step != StepPromote && d.Step != StepSetTargetPrimary {
		return d
	}
	for _, in := range o.Instances {
		if in.Name != d.Instance && in.SeenWritable() {
			return Decision{Kind: Wait, Operation: d.Operation, Until: o.Now.Add(PollInterval),
				Reason: fmt.Sprintf("%s still accepts writes; %s is not promoted until it stops", in.Name, d.Instance)}
		}
	}
	return d
}

// failing returns why the primary is failing, or "" when it is healthy: it must have a Pod that
// is ready and not being deleted, answer its control API and accept writes.
func failing(in Instance, seen bool) string {
	switch {
	case !seen || !in.PodExists:
		return "its Pod is missing"
	case in.PodDeleting:
		return "its Pod is being deleted"
	case !in.Reachable:
		return "it does not answer its control API"
	case !in.PodReady:
		return whyNotReady
	case !in.SeenWritable():
		return whyReadOnly
	}
	return ""
}

// decideSteady handles a Cluster whose target is its current primary: repoint replicas and
// clear primaryFailingSince while the primary is healthy, else run the failover steps.
func decideSteady(o Observation) Decision {
	st := o.Status
	p := st.CurrentPrimary
	if o.fenced(p) {
		return Decision{Kind: Nothing, Reason: fmt.Sprintf("the primary %s is fenced: writes are stopped deliberately and no failover starts", p)}
	}
	pi, seen := o.instance(p)
	why := failing(pi, seen)
	if why == "" || o.notReadyAlone(pi, why) {
		return decideHealthy(o)
	}
	if end, ok := o.PlannedRestartEnd(); ok && o.Now.Before(end) &&
		(st.PrimaryFailingSince.IsZero() || !st.PrimaryFailingSince.Before(st.PrimaryRestartAt)) {
		return Decision{Kind: Wait, Operation: PrimaryRestartOperation, Until: end,
			Reason: fmt.Sprintf("the primary %s restarts in place for a rolling update (%s); no failover before %s",
				p, why, end.UTC().Format(time.RFC3339))}
	}
	since := st.PrimaryFailingSince
	if since.IsZero() {
		return Decision{Kind: Failover, Operation: FailoverOperation, Step: StepRecordFailing, Instance: p,
			Until:  o.failoverWaitEnd(o.Now),
			Reason: fmt.Sprintf("the primary %s is failing: %s", p, why)}
	}
	if start := FailoverStart(o, since); o.Now.Before(start) {
		if o.RecoversInPlace() {
			why += "; it still renews its Lease: recovering in place, given " + InPlaceRecoveryGrace.String()
		}
		return Decision{Kind: Wait, Operation: FailoverOperation, Until: o.failoverWaitEnd(since),
			Reason: fmt.Sprintf("the primary %s is failing (%s) since %s; failover starts after failoverDelay (%s)",
				p, why, since.UTC().Format(time.RFC3339), o.Spec.FailoverDelay)}
	}
	return decideFailover(o, pi, why)
}

// NewPrimaryGrace is how long a primary is given after its promotion before a failover may
// replace it: its Pod's readiness can lag the promotion by a probe period (a replica turning
// primary is briefly read-only without a channel), and the primaryFailingSince of the failover
// that promoted it is still set until it is seen healthy.
const NewPrimaryGrace = 15 * time.Second

// InPlaceRecoveryGrace is how long a failing primary whose instance manager still renews its
// Lease is given to recover in place before a failover starts: its mysqld crashed and is being
// restarted (crash recovery and start took 2-6 s on the local node), and it will come back as
// the primary, holding every transaction it wrote. A failover could not promote anyone before
// that Lease expires anyway, and it would leave the old primary with the commits its replicas
// never acknowledged, diverged.
const InPlaceRecoveryGrace = 10 * time.Second

// leaseRenewalFresh is how recently the operator must have seen the primary renew its Lease to
// take its instance manager as alive: a renewal interval, plus slack for the request and the
// watch that delivers it.
const leaseRenewalFresh = LeaseRenewInterval + 3*time.Second

// FailoverStart is when a failover from the current primary, failing since since, may start:
// failoverDelay after it started failing, counted no earlier than its promotion
// (currentPrimaryTimestamp; a primaryFailingSince older than that belongs to the primary it
// replaced), and not within NewPrimaryGrace of its promotion. While the primary recovers in
// place (RecoversInPlace), not before InPlaceRecoveryGrace after it started failing either, and
// while it fails for being read-only alone, not before ReadOnlyGrace.
func FailoverStart(o Observation, since time.Time) time.Time {
	start, since := failoverStartOutOfPlace(o, since)
	if grace := since.Add(InPlaceRecoveryGrace); o.RecoversInPlace() && start.Before(grace) {
		start = grace
	}
	return start
}

// failoverStartOutOfPlace is FailoverStart for a primary that does not recover in place, and
// since counted no earlier than its promotion.
func failoverStartOutOfPlace(o Observation, since time.Time) (time.Time, time.Time) {
	st := o.Status
	if st.CurrentPrimaryTimestamp.After(since) {
		since = st.CurrentPrimaryTimestamp
	}
	start := since.Add(o.Spec.FailoverDelay)
	if grace := st.CurrentPrimaryTimestamp.Add(NewPrimaryGrace); !st.CurrentPrimaryTimestamp.IsZero() && start.Before(grace) {
		start = grace
	}
	if grace := since.Add(ReadOnlyGrace); o.onlyReadOnly() && start.Before(grace) {
		start = grace
	}
	return start, since
}

// ReadOnlyGrace is how long a primary that answers, with its Pod ready, but is read-only, is given
// to turn writable before a failover starts. It turns itself read-only as soon as targetPrimary
// names another instance, and writable again within a role pass (1 s) and a Lease acquisition
// once a switchover is aborted: without the grace, with failoverDelay 0, an aborted switchover
// could fail a healthy primary over.
const ReadOnlyGrace = 5 * time.Second

// whyNotReady is failing's reason for a primary whose Pod is not ready.
const whyNotReady = "its Pod is not ready"

// notReadyAlone: the primary fails only for its Pod's readiness, while it answers its control API
// as the writable primary and its instance manager renews its Lease (RecoversInPlace). A readiness
// probe starved under load, or a kubelet that cannot reach it, is no reason to demote a primary
// that works: a failover would stop its writes without fixing anything.
func (o *Observation) notReadyAlone(in Instance, why string) bool {
	return why == whyNotReady && in.Reachable && in.SeenWritable() && o.RecoversInPlace()
}

// whyReadOnly is failing's reason for a primary that answers, with its Pod ready, read-only.
const whyReadOnly = "it is read-only"

// onlyReadOnly: the current primary fails for being read-only alone.
func (o *Observation) onlyReadOnly() bool {
	in, seen := o.instance(o.Status.CurrentPrimary)
	return failing(in, seen) == whyReadOnly
}

// RecoversInPlace reports whether the failing current primary is being recovered by its own
// instance manager: its Pod runs (exists, not being deleted) and it holds the primary Lease,
// which the operator saw it renew less than leaseRenewalFresh ago. Its manager is alive and
// restarting its mysqld; the server comes back read-only and turns writable again as the primary.
func (o *Observation) RecoversInPlace() bool {
	p := o.Status.CurrentPrimary
	in, seen := o.instance(p)
	l := o.Lease
	return o.Spec.EnablePrimaryLease && seen && in.PodExists && !in.PodDeleting && l.Exists && l.Holder == p &&
		!LeaseExpired(l, o.Now) && o.Now.Before(l.ObservedAt.Add(leaseRenewalFresh))
}

// failoverWaitEnd is when to look again at a primary failing since since: when its failover may
// start (FailoverStart), or, while it recovers in place, as soon as its Lease renewal is overdue
// (its manager stopped renewing: cut off or gone) if failoverDelay is over by then: the
// InPlaceRecoveryGrace no longer applies from then on and the failover may start at once.
func (o *Observation) failoverWaitEnd(since time.Time) time.Time {
	start := FailoverStart(*o, since)
	overdue := o.Lease.ObservedAt.Add(leaseRenewalFresh)
	if !o.RecoversInPlace() || !overdue.Before(start) {
		return start
	}
	if outOfPlace, _ := failoverStartOutOfPlace(*o, since); overdue.Before(outOfPlace) {
		return outOfPlace
	}
	return overdue
}

// LeaseRenewalSlack is how late the operator may hear of the primary's Lease renewal (the
// holder's check interval, the request and the watch that delivers it) before it looks at the
// primary.
const LeaseRenewalSlack = time.Second

// LeaseRenewalDue is when the operator should at the latest have heard of the current primary's
// next Lease renewal: LeaseRenewInterval plus LeaseRenewalSlack after it saw the last one. A
// renewal arrives as a watch event and starts a reconcile by itself; one that does not arrive is
// the earliest sign that the primary's instance manager is cut off or gone, so the controller
// looks at the primary then rather than at its next periodic report. ok is false when the
// primary does not hold the Lease, the Lease is off, the time has passed, or a failover or
// switchover is under way (its own waits say when to look again).
func LeaseRenewalDue(o Observation) (time.Time, bool) {
	due, ok := renewalDue(o)
	st := o.Status
	return due, ok && due.After(o.Now) && st.PrimaryFailingSince.IsZero() && st.TargetPrimary == st.CurrentPrimary
}

// LeaseRenewalOverdue reports whether the current primary holds the Lease and the operator has
// not heard of its renewal by its due time: its instance manager may be cut off or gone.
func LeaseRenewalOverdue(o Observation) bool {
	due, ok := renewalDue(o)
	return ok && !due.After(o.Now)
}

// renewalDue is when the current primary's next renewal of the Lease is due, if it holds it.
func renewalDue(o Observation) (time.Time, bool) {
	l := o.Lease
	if !o.Spec.EnablePrimaryLease || !l.Exists || l.Holder == "" || l.Holder != o.Status.CurrentPrimary || l.ObservedAt.IsZero() {
		return time.Time{}, false
	}
	return l.ObservedAt.Add(LeaseRenewInterval + LeaseRenewalSlack), true
}

// decideHealthy repoints replicas that do not follow the healthy primary, then clears
// primaryFailingSince. A primary that recovers before its failover replaced it has
// primaryFailingSince cleared first: its replicas keep a receiver the failover stopped stopped
// only while primaryFailingSince is set, so repointing them first would wait for ever.
func decideHealthy(o Observation) Decision {
	st := o.Status
	if !st.PrimaryFailingSince.IsZero() && !st.promotedSinceFailing() {
		return Decision{Kind: Failover, Operation: FailoverOperation, Step: StepClearFailing,
			Instance: st.CurrentPrimary, Reason: "the primary " + st.CurrentPrimary + " is healthy again"}
	}
	op, kind := SwitchoverOperation, Switchover
	if !st.PrimaryFailingSince.IsZero() {
		op, kind = FailoverOperation, Failover
	}
	if names := o.toRepoint(); len(names) > 0 {
		return Decision{Kind: kind, Operation: op, Step: StepRepoint, Instances: names,
			Reason: "replicas follow the primary " + st.CurrentPrimary}
	}
	if st.PrimaryFailingSince.IsZero() {
		return Decision{Kind: Nothing, Reason: "the primary " + st.CurrentPrimary + " is healthy"}
	}
	reason := "failover completed: " + st.CurrentPrimary + " is the primary"
	if st.FailingPrimary != "" {
		reason = "failover from " + st.FailingPrimary + " completed: " + st.CurrentPrimary + " is the primary"
	}
	return Decision{Kind: Failover, Operation: FailoverOperation, Step: StepClearFailing,
		Instance: st.CurrentPrimary, Reason: reason}
}

// toRepoint lists the replicas that answered, are neither fenced nor diverged, and replicate from
// another instance than the primary, or (after a failover stopped it) have their IO thread
// stopped without an error. A thread still connecting is trying, not stopped.
func (o *Observation) toRepoint() []string {
	p := o.Status.CurrentPrimary
	afterFailover := !o.Status.PrimaryFailingSince.IsZero()
	var out []string
	for _, in := range o.Instances {
		r := in.Replication
		if in.Name == p || !in.Reachable || r == nil || o.fenced(in.Name) || o.diverged(in.Name) {
			continue
		}
		if r.Source != p || (afterFailover && !r.IOActive() && r.IOLastError == "") {
			out = append(out, in.Name)
		}
	}
	return out
}

// decideFailover runs the failover steps once failoverDelay has passed. Each reconcile starts
// over from the top, so every step is checked again before the next one is taken.
func decideFailover(o Observation, old Instance, why string) Decision {
	p := old.Name
	fo := func(step Step, reason string) Decision {
		return Decision{Kind: Failover, Operation: FailoverOperation, Step: step, Instance: p, Reason: reason}
	}
	wait := func(until time.Time, reason string) Decision {
		return Decision{Kind: Wait, Operation: FailoverOperation, Until: until, Reason: reason}
	}
	cand, blocked, ok := o.SelectCandidate(p)
	if !ok {
		return Decision{Kind: Blocked, Operation: FailoverOperation,
			Reason: fmt.Sprintf("failover from %s (%s) is blocked: %s", p, why, blocked)}
	}
	accepted := o.acceptedLoss(p)
	if accepted != nil {
		named, notNamed := o.acceptedCandidate(accepted, cand, p)
		if notNamed != "" {
			// Still blocked on the writes at risk, so that the person can name another replica.
			return Decision{Kind: Blocked, Operation: FailoverOperation, BlockedBy: ReasonAcknowledgedWritesOnPrimaryOnly,
				Reason: fmt.Sprintf("failover from %s (%s) is blocked: %s", p, why, notNamed)}
		}
		cand = named
	}
	// Blocked before any step: the old primary is neither cut from its replicas nor its Pod
	// deleted, so that it catches them up as soon as it answers again.
	if risk, blocks, pending := o.acknowledgedAlone(old, cand); blocks && o.Spec.DataDurability == v1.DataDurabilityRequired && accepted == nil {
		if pending {
			// This reconcile records the proof; the next one reads it back and goes on.
			return wait(o.Now.Add(PollInterval), fmt.Sprintf("failover from %s (%s): %s", p, why, risk))
		}
		if old.SeenWritable() && cand.History().Contains(old.Executed) {
			// It answers, writable, with nothing the candidate lacks yet: turned read-only (and
			// fenced), it commits nothing more, and what it executed can then be recorded. Its
			// Pod stays until that record is read back (no DeletePod).
			return fo(StepDemote, fmt.Sprintf("failover from %s (%s): it still accepts writes after a semi-sync fallback; "+
				"turn it read-only, so that what it executed can be recorded before any other step", p, why))
		}
		return Decision{Kind: Blocked, Operation: FailoverOperation, BlockedBy: ReasonAcknowledgedWritesOnPrimaryOnly,
			Reason: fmt.Sprintf("failover from %s (%s) is blocked: %s; under dataDurability required the Cluster waits for %s to come back "+
				"(it then catches the replicas up), or for a person to accept the loss: kubectl cloudnative-mysql promote <cluster> %s --accept-data-loss",
				p, why, risk, p, cand.Name)}
	}
	if names := o.replicatingFrom(p); len(names) > 0 {
		d := fo(StepStopIOThreads, fmt.Sprintf("failover from %s (%s): stop the IO threads reading from it, so it collects no more semi-sync acknowledgements", p, why))
		d.Instance, d.Instances = "", names
		if !old.SeenWritable() && old.PodExists && !old.PodDeleting {
			d.DeletePod = p
			d.Reason += "; then delete its Pod, keep its PVC"
		}
		return d
	}
	if old.SeenWritable() {
		d := fo(StepDemote, fmt.Sprintf("failover from %s (%s): it still accepts writes; turn it read-only", p, why))
		d.DeletePod = p
		return d
	}
	if old.PodExists && !old.PodDeleting {
		return fo(StepDeletePod, fmt.Sprintf("failover from %s (%s): delete its Pod, keep its PVC", p, why))
	}
	if !cand.Drained() {
		return wait(o.Now.Add(PollInterval), fmt.Sprintf("failover from %s: %s applies its relay log (%s left)",
			p, cand.Name, cand.Retrieved.Subtract(cand.Executed)))
	}
	if o.Spec.EnablePrimaryLease && LeaseLiveFor(o.Lease, cand.Name, o.Now) {
		until := LeaseExpiry(o.Lease)
		return wait(until, fmt.Sprintf("failover from %s: the primary Lease is held by %s until %s; %s is promoted once it expires",
			p, o.Lease.Holder, until.UTC().Format(time.RFC3339), cand.Name))
	}
	d := Decision{Kind: Failover, Operation: FailoverOperation, Step: StepSetTargetPrimary, Instance: cand.Name,
		CatchUp: cand.History(),
		Reason:  fmt.Sprintf("failover from %s (%s): promote %s, the replica with the most complete history", p, why, cand.Name)}
	risk, _, pending := o.acknowledgedAlone(old, cand)
	if pending {
		risk = "" // nothing at risk: the old primary answers read-only with everything on cand
	}
	switch {
	case accepted != nil:
		d.Reason = fmt.Sprintf("failover from %s (%s): promote %s, named by the person who accepted the loss", p, why, cand.Name)
		d.AcceptedLoss = cmp.Or(risk, "nothing known at risk when "+cand.Name+" was named (it holds "+cand.History().String()+")")
		if risk != "" {
			d.Warning = acceptedWarning(risk, accepted)
		}
	case risk != "":
		d.Warning = risk + "; the failover goes on and they may be lost"
	}
	return d
}

// acknowledgedAlone says, when it may be so, that the failing primary p acknowledged commits the
// candidate may lack, and whether that blocks a failover under required. With the Lease on, the
// Lease's fallback record decides (written by p before its first such commit completed): it
// blocks while it names p and semi-sync has not resumed since, until status.fallbackCaughtUp
// proves the candidate holds everything p executed once read-only. That proof must be recorded
// before any step that acts on p: p answering read-only with everything on the candidate is not
// enough by itself, because the step that deletes its Pod ends that answer, and a proof lost
// with the status write of that reconcile (a conflict, an operator restart) would block the
// failover again for a primary that is then gone. Without the Lease, p's last report of semi-sync
// fallen back is all there is, and it blocks. A report with the Lease on only warns: the record
// is the authority, and a report may lag behind it. An old primary that answers, with every
// transaction it executed in the candidate's history, has nothing the candidate lacks.
//
// pending says the block is only the wait for that record: the old primary answers read-only with
// everything on the candidate, and this reconcile records it. risk then says so, and is no risk
// to warn of.
func (o *Observation) acknowledgedAlone(old, cand Instance) (risk string, blocks, pending bool) {
	p, r := old.Name, o.Lease.Fallback
	atRisk := o.Spec.EnablePrimaryLease && r.AtRisk(p)
	proofPending := o.fallbackProofPending(old, cand)
	switch {
	case atRisk && o.caughtUpAfterFallback(p, r, cand) && (!old.Reachable || proofPending):
		// Recorded, and not contradicted by what the old primary answers now (writable again, or
		// holding more than the candidate: the record is kept by its manager across a second
		// fallback, so its times alone do not tell).
		return "", false, false
	case atRisk && proofPending:
		return fmt.Sprintf("%s answers read-only and %s holds everything it executed (%s): the failover goes on once the operator "+
			"has recorded that (status.fallbackCaughtUp)", p, cand.Name, old.Executed), true, true
	case atRisk && r.GTIDExecuted != "":
		return fmt.Sprintf("%s fell back to asynchronous replication at %s: the commits it acknowledged after %s may exist on it alone "+
			"(%s has %s)", p, r.FellBackAt.UTC().Format(time.RFC3339), r.GTIDExecuted, cand.Name, cand.History()), true, false
	case atRisk:
		return fmt.Sprintf("the primary Lease records a semi-sync fallback of %s that cannot be read: commits it acknowledged may exist on it alone", p), true, false
	case old.Reachable && cand.History().Contains(old.Executed):
		return "", false, false
	case o.Status.SemiSyncFallenBack:
		return fmt.Sprintf("semi-sync had fallen back to asynchronous replication on %s when it last reported: "+
			"commits it acknowledged may exist on it alone (%s has %s)", p, cand.Name, cand.History()), !o.Spec.EnablePrimaryLease, false
	}
	return "", false, false
}

// fallbackProofPending: the old primary answers read-only and cand holds everything it executed,
// so this reconcile records status.fallbackCaughtUp (NextFallbackCaughtUp), and the next one,
// reading it back, lets the failover go on.
func (o *Observation) fallbackProofPending(old, cand Instance) bool {
	return old.SeenReadOnly() && cand.History().Contains(old.Executed)
}

// replicatingFrom lists the replicas that answered and still run an IO thread reading from p, or
// one trying to connect to it (it would receive, and acknowledge, once p answers again).
func (o *Observation) replicatingFrom(p string) []string {
	var out []string
	for _, in := range o.Instances {
		if in.Name != p && in.Reachable && in.Replication != nil && in.Replication.Source == p && in.Replication.IOActive() {
			out = append(out, in.Name)
		}
	}
	return out
}

// decideFailoverPromotion waits for the failover target to promote itself. If the target turns
// ineligible first, and is provably not writable, another candidate is chosen.
func decideFailoverPromotion(o Observation) Decision {
	st := o.Status
	t, p := st.TargetPrimary, st.CurrentPrimary
	ti, seen := o.instance(t)
	wait := Decision{Kind: Wait, Operation: FailoverOperation, Until: o.Now.Add(PollInterval),
		Reason: fmt.Sprintf("failover from %s: waiting for %s to promote itself", p, t)}
	if o.promoting(ti) {
		return wait
	}
	why := "not observed"
	if seen {
		why = o.Ineligible(ti, p)
	}
	if ahead, missing := o.aheadOf(ti, p); why == "" && ahead != "" {
		// A failover names its most advanced replica, so this holds for it; a switchover whose
		// old primary's Pod went away is waited out here, and its target must not be promoted
		// behind a replica holding acknowledged writes it lacks.
		why = fmt.Sprintf("less advanced than %s (missing %s)", ahead, missing)
	}
	if why == "" {
		return wait
	}
	if !o.provablyNotWritable(ti, seen) {
		return Decision{Kind: Blocked, Operation: FailoverOperation,
			Reason: fmt.Sprintf("failover from %s: the target %s is %s and, without the primary Lease, it cannot be told whether it promoted", p, t, why)}
	}
	old, _ := o.instance(p)
	d := decideFailover(o, old, "its replacement "+t+" is "+why)
	if d.Step == StepSetTargetPrimary && d.Instance == t {
		return wait
	}
	return d
}

// promoting reports whether in may already be writable: seen so, or holding the Lease.
func (o *Observation) promoting(in Instance) bool {
	return in.SeenWritable() || (o.Spec.EnablePrimaryLease && !LeaseExpired(o.Lease, o.Now) && o.Lease.Holder == in.Name)
}

// provablyNotWritable: in is seen read-only, or has no Pod, or (with the Lease on) does not hold
// the Lease; an instance must hold it before it clears read-only.
func (o *Observation) provablyNotWritable(in Instance, seen bool) bool {
	return !seen || !in.PodExists || in.SeenReadOnly() || (o.Spec.EnablePrimaryLease && !o.promoting(in))
}
