package failover

import (
	"fmt"
	"time"
)

// acceptedLoss is the acceptance that applies to a failover from p: a person named p as the
// primary whose acknowledged-alone commits they give up, for this very failure (its
// primaryFailingSince), and no failover has acted on it yet. An acceptance given for an earlier
// failure, or already used, never lets a later one through. nil when none applies.
func (o *Observation) acceptedLoss(p string) *DataLossAcceptance {
	a := o.Status.DataLossAccepted
	if a == nil || a.Promoted || a.FormerPrimary != p || o.Status.PrimaryFailingSince.IsZero() ||
		!a.FailingSince.Equal(o.Status.PrimaryFailingSince) {
		return nil
	}
	return a
}

// acceptedCandidate is the instance a person named to promote past the loss, when it can be: it
// must be eligible, no participant may be unseen, and it must hold everything best (the most
// advanced eligible replica) holds, so that accepting one loss never adds another. Otherwise it
// says why not.
func (o *Observation) acceptedCandidate(a *DataLossAcceptance, best Instance, p string) (Instance, string) {
	if a.Instance == best.Name {
		return best, ""
	}
	in, seen := o.instance(a.Instance)
	why := "not observed"
	if seen {
		why = o.Ineligible(in, p)
	}
	if why == "" {
		why = o.UnseenParticipant(p, in.Name)
	}
	if why != "" {
		return Instance{}, fmt.Sprintf("%s, named to be promoted past the loss, cannot be: %s", a.Instance, why)
	}
	if missing := best.History().Subtract(in.History()); !missing.IsEmpty() {
		return Instance{}, fmt.Sprintf("%s, named to be promoted past the loss, lacks %s, which %s has: name %s instead",
			a.Instance, missing, best.Name, best.Name)
	}
	return in, ""
}

// acceptedWarning is the failover's Warning when a person accepted the loss.
func acceptedWarning(risk string, a *DataLossAcceptance) string {
	return fmt.Sprintf("%s; the loss was accepted at %s (promote %s --accept-data-loss)", risk, a.AcceptedAt.UTC().Format(time.RFC3339), a.Instance)
}
