package failover

import (
	"cmp"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// Condition reasons this package decides. The Cluster controller merges them with its own
// (instances not ready, scaling, rolling update), giving these precedence.
const (
	// Ready=False: the current primary is failing.
	ReasonPrimaryUnavailable = "PrimaryUnavailable"
	// Progressing=True: a primary change is under way.
	ReasonSwitchoverInProgress = "SwitchoverInProgress"
	ReasonFailoverInProgress   = "FailoverInProgress"
	// ReasonPrimaryRestarting: a rolling update restarts the primary in place (no failover).
	ReasonPrimaryRestarting = "PrimaryRestarting"
	// Degraded=True, most serious first.
	ReasonSplitBrain      = "SeveralWritableInstances"
	ReasonFailoverBlocked = "FailoverBlocked"
	// ReasonAcknowledgedWritesOnPrimaryOnly: a failover under required is blocked because the
	// failing primary fell back to asynchronous replication and has not caught a replica up since.
	ReasonAcknowledgedWritesOnPrimaryOnly = "AcknowledgedWritesOnPrimaryOnly"
	ReasonSwitchoverBlocked               = "SwitchoverBlocked"
	ReasonPrimaryFailing                  = "PrimaryFailing"
	// ReasonSemiSyncAsync: semi-sync is enabled but the primary has fallen back to asynchronous
	// replication; a failover may lose writes it acknowledged alone.
	ReasonSemiSyncAsync = "SemiSyncFallenBackToAsync"
	// ReasonSemiSyncAckWait: commits have waited for semi-sync acknowledgements longer than
	// timeoutMillis (clients see writes hang).
	ReasonSemiSyncAckWait = "SemiSyncAcknowledgementsLate"
)

// Conditions returns the conditions on which o and its decision d have an opinion: Ready=False
// while the primary fails, Progressing=True while a switchover or failover is under way,
// Degraded=True while one is blocked, the primary fails, or semi-sync does not protect commits.
// LastTransitionTime and ObservedGeneration are left to the caller.
func Conditions(o Observation, d Decision) []metav1.Condition {
	var out []metav1.Condition
	add := func(t string, s metav1.ConditionStatus, reason, msg string) {
		out = append(out, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg})
	}
	p := o.Status.CurrentPrimary
	pi, seen := o.instance(p)
	why := ""
	if p != "" && !o.fenced(p) {
		why = failing(pi, seen)
	}
	if why != "" {
		add(v1.ConditionReady, metav1.ConditionFalse, ReasonPrimaryUnavailable, fmt.Sprintf("the primary %s is failing: %s", p, why))
	}
	if d.Kind != Nothing && d.Kind != Blocked {
		switch d.Operation {
		case SwitchoverOperation:
			add(v1.ConditionProgressing, metav1.ConditionTrue, ReasonSwitchoverInProgress, d.Reason)
		case FailoverOperation:
			add(v1.ConditionProgressing, metav1.ConditionTrue, ReasonFailoverInProgress, d.Reason)
		case PrimaryRestartOperation:
			add(v1.ConditionProgressing, metav1.ConditionTrue, ReasonPrimaryRestarting, d.Reason)
		}
	}
	switch {
	case d.Kind == Blocked && d.Operation == NoOperation:
		add(v1.ConditionDegraded, metav1.ConditionTrue, ReasonSplitBrain, d.Reason)
	case d.Kind == Blocked && d.Operation == FailoverOperation:
		add(v1.ConditionDegraded, metav1.ConditionTrue, cmp.Or(d.BlockedBy, ReasonFailoverBlocked), d.Reason)
	case d.Kind == Blocked:
		add(v1.ConditionDegraded, metav1.ConditionTrue, ReasonSwitchoverBlocked, d.Reason)
	case why != "" && d.Operation != PrimaryRestartOperation:
		add(v1.ConditionDegraded, metav1.ConditionTrue, ReasonPrimaryFailing, fmt.Sprintf("the primary %s is failing: %s", p, why))
	case o.Spec.SemiSync && pi.Reachable && pi.SemiSync != nil && !pi.SemiSync.Active:
		add(v1.ConditionDegraded, metav1.ConditionTrue, ReasonSemiSyncAsync,
			fmt.Sprintf("semi-sync on %s has fallen back to asynchronous replication: writes it acknowledges may exist on it alone", p))
	case o.Spec.SemiSync && pi.Reachable && pi.SemiSync != nil && pi.SemiSync.LongestAckWait > o.Spec.SemiSyncTimeout:
		add(v1.ConditionDegraded, metav1.ConditionTrue, ReasonSemiSyncAckWait,
			fmt.Sprintf("a commit on %s has waited %s for semi-sync acknowledgements, longer than timeoutMillis (%s)",
				p, pi.SemiSync.LongestAckWait.Round(time.Millisecond), o.Spec.SemiSyncTimeout))
	}
	return out
}

// Event reasons of the decisions, recorded on the Cluster.
const (
	EventSplitBrain          = "SeveralWritableInstances"
	EventPrimaryFailing      = "PrimaryFailing"
	EventPrimaryRecovered    = "PrimaryRecovered"
	EventFailoverStarted     = "FailoverStarted"
	EventFailoverDemoting    = "FailoverDemotingPrimary"
	EventFailoverDeletingPod = "FailoverDeletingPrimaryPod"
	EventFailoverPromoting   = "FailoverPromoting"
	EventFailoverCompleted   = "FailoverCompleted"
	EventFailoverBlocked     = "FailoverBlocked"
	EventSwitchoverStarted   = "SwitchoverStarted"
	EventSwitchoverPromoting = "SwitchoverPromoting"
	EventSwitchoverBlocked   = "SwitchoverBlocked"
	EventSwitchoverCompleted = "SwitchoverCompleted"
	EventReplicasRepointed   = "ReplicasRepointed"
)

// Event is one Event to record on the Cluster.
type Event struct {
	Type    string
	Reason  string
	Message string
}

// EventFor returns the Event of decision d taken on o, if it has one. Waits and Nothing have
// none; a step repeated over several reconciles repeats its Event, which the recorder folds into
// one with a count. The completion of a switchover is seen by the caller (status.currentPrimary
// changes to the former target), which records EventSwitchoverCompleted.
func EventFor(o Observation, d Decision) (Event, bool) {
	normal := func(reason string) (Event, bool) {
		return Event{Type: corev1.EventTypeNormal, Reason: reason, Message: d.Reason}, true
	}
	warning := func(reason string) (Event, bool) {
		return Event{Type: corev1.EventTypeWarning, Reason: reason, Message: d.Reason}, true
	}
	switch {
	case d.Kind == Blocked && d.Operation == NoOperation:
		return warning(EventSplitBrain)
	case d.Kind == Blocked && d.Operation == FailoverOperation:
		return warning(EventFailoverBlocked)
	case d.Kind == Blocked:
		return warning(EventSwitchoverBlocked)
	}
	switch d.Step {
	case StepRecordFailing:
		return warning(EventPrimaryFailing)
	case StepClearFailing:
		if o.Status.promotedSinceFailing() {
			return normal(EventFailoverCompleted)
		}
		return normal(EventPrimaryRecovered)
	case StepStopIOThreads:
		return normal(EventFailoverStarted)
	case StepDemote:
		if d.Operation == FailoverOperation {
			return normal(EventFailoverDemoting)
		}
		return normal(EventSwitchoverStarted)
	case StepDeletePod:
		return normal(EventFailoverDeletingPod)
	case StepSetTargetPrimary:
		if d.Warning != "" {
			return Event{Type: corev1.EventTypeWarning, Reason: EventFailoverPromoting, Message: d.Reason + "; " + d.Warning}, true
		}
		return normal(EventFailoverPromoting)
	case StepPromote:
		return normal(EventSwitchoverPromoting)
	case StepRepoint:
		return normal(EventReplicasRepointed)
	}
	return Event{}, false
}
