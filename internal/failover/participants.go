package failover

import "fmt"

// MayHoldAcknowledged reports whether in, a replica that did not answer in this reconcile, may
// hold commits the primary counted as acknowledged that no replica seen holds: with semi-sync
// on, it may be a participant (rpl_semi_sync_replica_enabled), and a commit needs only
// rpl_semi_sync_source_wait_for_replica_count acknowledgements, so its own may have been the only
// one. Whether it participates cannot be read from a replica that does not answer, and its last
// answer is no evidence: the semi-sync plan moves participation to healthy replicas exactly when
// one fails, so the replica that just stopped answering is the likeliest to have acknowledged
// last. With semi-sync off no commit waits for a replica, and what a replica alone holds was never
// promised to a client.
func (o *Observation) MayHoldAcknowledged(in Instance) bool {
	return o.Spec.SemiSync && !in.Reachable
}

// UnseenParticipant says why a failover from primary may not promote cand: a replica that is
// neither fenced nor diverged, did not answer, and may hold acknowledged writes cand lacks
// (MayHoldAcknowledged), whether its Pod runs, is being deleted or is gone (a deleted Pod may
// still run on a node cut off from the cluster, and a crashed one comes back on its PVC with its
// relay log). "" when there is none. The reason names the replica and how the failover goes on:
// the replica answers again, or a human fences it, accepting the loss of what only it holds.
func (o *Observation) UnseenParticipant(primary, cand string) string {
	for _, in := range o.Instances {
		if in.Name == primary || in.Name == cand || o.fenced(in.Name) || o.diverged(in.Name) || !o.MayHoldAcknowledged(in) {
			continue
		}
		return fmt.Sprintf("the semi-sync participant %s did not answer (%s): it may hold acknowledged writes %s lacks; "+
			"the failover waits until it answers again, or until it is fenced (kubectl cloudnative-mysql fence on), "+
			"which gives up what only it holds", in.Name, podState(in), cand)
	}
	return ""
}

// podState describes the Pod of an instance that did not answer.
func podState(in Instance) string {
	switch {
	case !in.PodExists:
		return "it has no Pod"
	case in.PodDeleting:
		return "its Pod is being deleted"
	}
	return "its Pod runs"
}
