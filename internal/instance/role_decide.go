package instance

import (
	"slices"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// RoleAction is what the role reconciler does to its mysqld.
type RoleAction int

const (
	// ActHold keeps the server read-only and leaves replication as it is: the instance is fenced,
	// or waits for a primary it can verify.
	ActHold RoleAction = iota
	// ActPrimary makes the server the primary: wait until the applier has executed everything
	// received, stop and reset replication, clear read-only, then record status.currentPrimary.
	// Every step is idempotent, so an instance that already is the primary just confirms it.
	ActPrimary
	// ActFollow keeps the server read-only and replicating from Source.
	ActFollow
	// ActDiverged keeps the server read-only with replication stopped and reports it diverged.
	// Its data is never cloned over automatically.
	ActDiverged
)

func (a RoleAction) String() string {
	return [...]string{"hold", "primary", "follow", "diverged"}[a]
}

// RoleInput is the snapshot the role decision needs.
type RoleInput struct {
	Instance string
	Status   *v1alpha1.ClusterStatus
	// ReplicatingFrom is the instance this server's replication channel points at ("" if none).
	ReplicatingFrom string
	// Executed is this server's gtid_executed.
	Executed gtid.Set
	// PrimaryExecuted is the current primary's gtid_executed, nil when unknown. On the target of a
	// switchover it is the old primary's set, read once that one is read-only. It must be read
	// after Executed: a primary's set only grows, so whatever this server received from it is then
	// in PrimaryExecuted, and only transactions the primary never had count as errant.
	PrimaryExecuted *gtid.Set
	// PrimaryInFlight, read with PrimaryExecuted (just before it), are the primary's GTIDs that
	// are in its binary log, or being written there, but not committed yet: the commits that
	// wait for a semi-sync acknowledgement (AFTER_SYNC). Its replicas, and their replicas, may
	// have applied them already, so they are not errant: the primary commits them once
	// acknowledged, or at the latest when the wait times out.
	PrimaryInFlight gtid.Set
	// Received is what this server's replication channel received from ReplicatingFrom
	// (Retrieved_Gtid_Set). Those transactions were in that source's binary log, so they are not
	// errant relative to it even before they show in its gtid_executed: with semi-sync's
	// AFTER_SYNC wait, a primary adds a transaction to gtid_executed only once acknowledged, while
	// its replicas may already have applied it.
	Received gtid.Set
	// PrimaryWritable: the current primary, read with PrimaryExecuted, still accepts writes. The
	// target of a switchover waits for it to turn read-only, so that two instances never accept
	// writes at once.
	PrimaryWritable bool
	// PrimaryAckWaiters, read with PrimaryExecuted, is the number of the primary's commits that
	// wait for a semi-sync acknowledgement: with the AFTER_SYNC wait point they are in its binary
	// log, and perhaps on a replica, but not in PrimaryExecuted yet. The target of a switchover
	// waits for them to end before it takes PrimaryExecuted as the old primary's final set.
	PrimaryAckWaiters int
	// LeaseEnabled is spec.enablePrimaryLease.
	LeaseEnabled bool
	// Lease is whether this instance may take the primary Lease now (MayTakeLease), nil when it
	// was not read. The target of a switchover reads it when the old primary does not answer.
	Lease *LeaseTake
	// PrimaryPodGone: the old primary's Pod no longer exists (the operator deleted it). The
	// target reads it when the old primary does not answer and the Lease is disabled.
	PrimaryPodGone bool
}

// RoleDecision is the outcome of DecideRole.
type RoleDecision struct {
	Action RoleAction
	// Source is the instance to replicate from, for ActFollow.
	Source string
	// Errant are the transactions only this server has, for ActDiverged.
	Errant gtid.Set
	// CatchUp, for ActPrimary during a switchover, is the old primary's GTID set: the promotion
	// waits until this server has executed all of it, so no acknowledged write is left behind.
	CatchUp gtid.Set
	// KeepReceiverStopped, for ActFollow, leaves a stopped IO thread stopped (the applier is
	// started): a failover from the current primary is under way.
	KeepReceiverStopped bool
	// SemiSync, for ActPrimary, are the semi-sync settings the server takes before it clears
	// read-only, so that no commit is acknowledged without its replicas' acknowledgements; nil
	// when semi-sync is not managed or nothing needs to change (the caller fills it in).
	SemiSync *mysql.SemiSyncSettings
	// Soon asks for the next pass after SoonInterval rather than the period: the decision waits
	// for a step of a switchover that takes a fraction of a second (the old primary turning
	// read-only).
	Soon bool
	// Reason explains the decision in a few words, for logs and events.
	Reason string
}

// DecideRole converges one instance to status.targetPrimary. Safety first: a fenced instance or
// one listed as diverged never becomes writable; a replica follows the current primary only when
// its GTID set is contained in the primary's, or when it already follows that primary.
func DecideRole(in RoleInput) RoleDecision {
	st := in.Status
	switch {
	case slices.Contains(st.FencedInstances, in.Instance):
		return RoleDecision{Action: ActHold, Reason: "fenced"}
	case slices.Contains(st.DivergedInstances, in.Instance):
		return RoleDecision{Action: ActDiverged, Reason: "listed as diverged; a human must decide"}
	case st.TargetPrimary == "":
		return RoleDecision{Action: ActHold, Reason: "no target primary yet"}
	case st.TargetPrimary == in.Instance:
		return decideTarget(in)
	case st.CurrentPrimary == "" || st.CurrentPrimary == in.Instance:
		// A switchover away from this instance, or a primary not yet confirmed: read-only until
		// the target has promoted itself and recorded it.
		return RoleDecision{Action: ActHold, Reason: "waiting for " + st.TargetPrimary + " to become primary"}
	}
	d := decideReplica(in)
	if d.Action == ActFollow && st.PrimaryFailingSince != nil && in.ReplicatingFrom == st.CurrentPrimary &&
		!failover.ClusterPromotedSinceFailing(st) {
		// A failover may have stopped this replica's IO thread so the failing primary collects no
		// more semi-sync acknowledgements: the receiver stays stopped, the applier runs. A primary
		// promoted after it started failing is the failover's new primary, not the failing one.
		d.KeepReceiverStopped = true
		d.Reason = "following the failing primary; a stopped receiver stays stopped"
	}
	return d
}

// decideReplica decides for an instance that is neither fenced, diverged nor the target: follow
// the current primary when its GTID set allows it.
func decideReplica(in RoleInput) RoleDecision {
	st := in.Status
	primary := st.CurrentPrimary
	if in.PrimaryExecuted == nil {
		if in.ReplicatingFrom == primary {
			return RoleDecision{Action: ActFollow, Source: primary, Reason: "following the primary"}
		}
		return RoleDecision{Action: ActHold, Reason: "primary's GTID set unknown; cannot check divergence"}
	}
	errant := gtid.Errant(in.Executed, *in.PrimaryExecuted).Subtract(in.PrimaryInFlight)
	if in.ReplicatingFrom == primary {
		errant = errant.Subtract(in.Received)
	}
	if !errant.IsEmpty() {
		return RoleDecision{Action: ActDiverged, Errant: errant, Reason: "transactions the primary never had"}
	}
	return RoleDecision{Action: ActFollow, Source: primary, Reason: "following the primary"}
}

// decideTarget decides for the target primary. When the old primary is another instance, the
// target promotes only with proof that the old one stopped writing: seen read-only through its
// control API, or (when it does not answer) its Lease expired, or with the Lease disabled its
// Pod gone. Never on "unreachable" alone: an old primary cut off from this instance may still
// be writing for its clients. And never short: seen read-only, the old primary's final set is
// what it must execute first; not seen, the set the operator recorded for this primary change
// (status.targetPrimaryCatchUp: the old primary's final set and what the other replicas received
// from it), and until the operator has recorded it the target waits.
func decideTarget(in RoleInput) RoleDecision {
	old := in.Status.CurrentPrimary
	recorded, why := recordedCatchUp(in.Status, in.Instance)
	switch {
	case old == "" || old == in.Instance:
		return RoleDecision{Action: ActPrimary, Reason: "target primary"}
	case in.PrimaryExecuted != nil && in.PrimaryWritable:
		return RoleDecision{Action: ActHold, Soon: true, Reason: "waiting for " + old + " to turn read-only"}
	case in.PrimaryExecuted != nil && in.PrimaryAckWaiters > 0:
		return RoleDecision{Action: ActHold, Soon: true, Reason: "waiting for the commits of " + old + " that wait for semi-sync acknowledgements: its final GTID set is not known yet"}
	case in.PrimaryExecuted != nil:
		catchUp := *in.PrimaryExecuted
		if recorded != nil {
			catchUp = gtid.Union(catchUp, *recorded)
		}
		return RoleDecision{Action: ActPrimary, CatchUp: catchUp, Reason: "switchover from " + old + ", seen read-only"}
	case in.LeaseEnabled && in.Lease == nil:
		return RoleDecision{Action: ActHold, Reason: old + " does not answer and its Lease is unknown"}
	case in.LeaseEnabled && !in.Lease.Allowed:
		return RoleDecision{Action: ActHold, Reason: old + " does not answer; waiting for its Lease to expire: " + in.Lease.Reason}
	case recorded == nil && (in.LeaseEnabled || in.PrimaryPodGone):
		return RoleDecision{Action: ActHold, Reason: old + " does not answer and " + why}
	case in.LeaseEnabled:
		return RoleDecision{Action: ActPrimary, CatchUp: *recorded, Reason: old + " does not answer and its Lease is free: " + in.Lease.Reason}
	case in.PrimaryPodGone:
		return RoleDecision{Action: ActPrimary, CatchUp: *recorded, Reason: old + " does not answer and its Pod is gone"}
	}
	return RoleDecision{Action: ActHold, Reason: old + " does not answer and its Pod still exists (primary Lease disabled)"}
}

// recordedCatchUp returns the set status.targetPrimaryCatchUp records for instance in the primary
// change under way (same target, same targetPrimaryTimestamp), or nil and why not.
func recordedCatchUp(st *v1alpha1.ClusterStatus, instance string) (*gtid.Set, string) {
	rec := st.TargetPrimaryCatchUp
	switch {
	case rec == nil:
		return nil, "the operator has not recorded what it must execute first"
	case rec.Instance != instance || !rec.TargetPrimaryTimestamp.Equal(st.TargetPrimaryTimestamp):
		return nil, "the operator's record of what to execute first is for another primary change"
	}
	set, err := gtid.Parse(rec.GTIDSet)
	if err != nil {
		return nil, "the operator's record of what to execute first does not parse: " + err.Error()
	}
	return &set, ""
}

// Drained reports whether the applier has executed every transaction the receiver got, so that
// a promoted replica loses nothing it already holds.
func Drained(retrieved, executed gtid.Set) bool {
	return executed.Contains(retrieved)
}
