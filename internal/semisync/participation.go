package semisync

import "slices"

// Participation is what the operator last told a replica's instance manager about sending
// acknowledgements (rpl_semi_sync_replica_enabled): whether the replica is one of the plan's
// Participants.
type Participation int

const (
	// NotTold: the operator has not said since this instance manager started. The replica
	// acknowledges. One acknowledger too many only lets a commit's acknowledgement come from a
	// replica outside Plan.Participants, which weakens maxSyncReplicas but not durability (the
	// failover counts every unreachable replica as a possible participant); one too few can hold
	// every commit until timeoutMillis under required, and the operator, which corrects the
	// first within a reconcile, may not be there to correct the second.
	NotTold Participation = iota
	// Participant: the operator named the replica among the plan's participants.
	Participant
	// NotParticipant: the operator left the replica out of the plan's participants; it
	// replicates asynchronously.
	NotParticipant
)

// Acknowledges reports whether a replica told p sends acknowledgements.
func (p Participation) Acknowledges() bool { return p != NotParticipant }

// ParticipationOf is the Participation the operator tells a replica: whether it participates.
func ParticipationOf(participant bool) Participation {
	if participant {
		return Participant
	}
	return NotParticipant
}

// ParticipantChange is one replica to tell whether it acknowledges.
type ParticipantChange struct {
	Instance    string
	Participant bool
}

// ParticipantChanges compares the replicas' reported rpl_semi_sync_replica_enabled
// (acknowledging, by replica; a replica that did not report is absent and is not told) with the
// plan's participants, and returns the replicas to tell: first those that must start
// acknowledging, then those that must stop, each group in name order. The caller tells them in
// that order and stops at the first failure, so that the acknowledgers never drop below the
// participants while the set changes. Nothing is told while semi-sync is off.
func ParticipantChanges(plan Plan, acknowledging map[string]bool) []ParticipantChange {
	if !plan.Enabled {
		return nil
	}
	names := make([]string, 0, len(acknowledging))
	for name := range acknowledging {
		names = append(names, name)
	}
	slices.Sort(names)
	var start, stop []ParticipantChange
	for _, name := range names {
		want := slices.Contains(plan.Participants, name)
		switch {
		case want && !acknowledging[name]:
			start = append(start, ParticipantChange{Instance: name, Participant: true})
		case !want && acknowledging[name]:
			stop = append(stop, ParticipantChange{Instance: name, Participant: false})
		}
	}
	return append(start, stop...)
}
