package failover

import (
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// Kind is what a Decision asks of the controller.
type Kind int

const (
	// Nothing: the topology is as it should be.
	Nothing Kind = iota
	// Wait: look again at Until; Reason says what for.
	Wait
	// Switchover: perform Step of a planned switchover.
	Switchover
	// Failover: perform Step of an automatic failover.
	Failover
	// Blocked: nothing may be promoted safely; Reason says why, for a human. Step is
	// StepAbortSwitchover when a switchover must be undone so the old primary resumes.
	Blocked
)

func (k Kind) String() string {
	return [...]string{"nothing", "wait", "switchover", "failover", "blocked"}[k]
}

// Operation is what is under way, for conditions and Events.
type Operation int

const (
	NoOperation Operation = iota
	SwitchoverOperation
	FailoverOperation
	// PrimaryRestartOperation is a rolling update's planned restart of the primary in place
	// (status.primaryRestart), during which no failover starts.
	PrimaryRestartOperation
)

func (o Operation) String() string {
	return [...]string{"none", "switchover", "failover", "primary restart"}[o]
}

// Step is one small, idempotent action. Its subject is Decision.Instance or Decision.Instances.
type Step int

const (
	NoStep Step = iota
	// StepRecordFailing sets status.primaryFailingSince to Now and status.failingPrimary to
	// Instance, the failing primary.
	StepRecordFailing
	// StepClearFailing clears status.primaryFailingSince and status.failingPrimary: the primary
	// (old or new) is healthy.
	StepClearFailing
	// StepStopIOThreads stops the replication IO thread of Instances, which still replicate from
	// the failing primary, so it can no longer collect semi-sync acknowledgements.
	StepStopIOThreads
	// StepDeletePod deletes the Pod of the old primary Instance; its PVC stays. The instance
	// comes back read-only and rejoins as a replica, or is marked diverged.
	StepDeletePod
	// StepSetTargetPrimary sets status.targetPrimary (and its timestamp) to Instance, which then
	// promotes itself.
	StepSetTargetPrimary
	// StepDemote asks the old primary Instance, over its control API, to set super_read_only,
	// end its client sessions and release the Lease.
	StepDemote
	// StepPromote lets the switchover target Instance promote itself once it has executed
	// CatchUp: the old primary is seen read-only or its Lease has expired.
	StepPromote
	// StepAbortSwitchover sets status.targetPrimary back to the current primary Instance, which
	// resumes writes under its Lease.
	StepAbortSwitchover
	// StepRepoint makes Instances replicate from the current primary (and restarts the threads a
	// failover stopped).
	StepRepoint
)

func (s Step) String() string {
	return [...]string{"none", "record-failing", "clear-failing", "stop-io-threads", "delete-pod",
		"set-target-primary", "demote", "promote", "abort-switchover", "repoint"}[s]
}

// PollInterval is how soon to look again while waiting for something with no deadline of its
// own: a candidate applying its relay log, a target promoting itself.
const PollInterval = 2 * time.Second

// Decision is the single next thing to do.
type Decision struct {
	Kind      Kind
	Operation Operation
	Step      Step
	// Reason explains the decision in a sentence, for logs, conditions and Events.
	Reason string
	// Until is when to look again, for Wait (and for a step after which time must pass).
	Until time.Time
	// Instance is the subject of single-instance steps.
	Instance string
	// Instances are the subjects of StepStopIOThreads and StepRepoint.
	Instances []string
	// DeletePod, for StepStopIOThreads of a failover, names the old primary whose Pod is deleted
	// (its PVC kept) in the same act, once the IO threads are stopped: it is not seen accepting
	// writes, so StepDeletePod would follow at once, and a primary cut off from the network makes
	// every reconcile wait for its answer. For a failover's StepDemote it names the old primary
	// whose Pod is deleted once the demotion succeeded; empty when its Pod must stay until what it
	// executed is recorded (after a semi-sync fallback).
	DeletePod string
	// CatchUp, for StepPromote and StepSetTargetPrimary, is the GTID set the target must have
	// executed before it clears read-only (recorded as status.targetPrimaryCatchUp).
	CatchUp gtid.Set
	// Warning, for a failover, says what the failover cannot guarantee (semi-sync had fallen
	// back to asynchronous replication, so acknowledged writes may be lost with the old primary).
	Warning string
	// AcceptedLoss, for a StepSetTargetPrimary a person's acceptance of data loss allowed, is what
	// the operator can tell of that loss, for status.dataLossAccepted.lost.
	AcceptedLoss string
	// BlockedBy, for a Blocked decision, is the condition reason that names why in one word
	// (ReasonAcknowledgedWritesOnPrimaryOnly); empty, the operation's own blocked reason is used.
	BlockedBy string
}

// RequeueAfter is how long to wait before the next look: Until minus now, or 0.
func (d Decision) RequeueAfter(now time.Time) time.Duration {
	if d.Until.IsZero() || !d.Until.After(now) {
		return 0
	}
	return d.Until.Sub(now)
}
