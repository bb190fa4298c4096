package failover

import (
	"fmt"
	"strings"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// Ineligible returns why in may not be promoted by a failover from primary, or "" when it may:
// its Pod is ready and not being deleted, it answered, it runs as a read-only replica, it is
// neither fenced nor diverged, and its SQL thread runs without a last error (it can apply its
// relay log). Its IO thread is not checked: the primary it reads from is failing.
func (o *Observation) Ineligible(in Instance, primary string) string {
	switch {
	case in.Name == primary:
		return "the failing primary"
	case o.fenced(in.Name):
		return "fenced"
	case o.diverged(in.Name):
		return "diverged"
	case !in.PodExists || in.PodDeleting:
		return "no Pod, or its Pod is being deleted"
	case !in.PodReady:
		return "not ready"
	case !in.Reachable:
		return "did not answer"
	case in.Role != v1.RoleReplica || !in.SuperReadOnly:
		return "not a read-only replica"
	case in.Replication == nil:
		return "no replication channel"
	case !in.Replication.SQLRunning:
		return "SQL thread stopped"
	case in.Replication.SQLLastError != "":
		return "SQL thread error: " + in.Replication.SQLLastError
	}
	return ""
}

// SelectCandidate picks the replica a failover from primary promotes: among the eligible ones
// (Ineligible), the one whose history (executed and retrieved) contains every other's; the
// earliest in Observation.Instances on ties. It refuses (ok false, with the reason) when no
// replica is eligible, when the eligible histories diverge (each holds transactions another
// lacks), when a replica seen but not eligible holds transactions the candidate lacks
// (promoting would lose them), or when a semi-sync participant did not answer, whether its Pod
// runs, is being deleted or is gone (UnseenParticipant). Instances listed as diverged or fenced
// do not count.
func (o *Observation) SelectCandidate(primary string) (Instance, string, bool) {
	var eligible []Instance
	var skipped []string
	for _, in := range o.Instances {
		if why := o.Ineligible(in, primary); why != "" {
			if in.Name != primary {
				skipped = append(skipped, in.Name+" ("+why+")")
			}
			continue
		}
		eligible = append(eligible, in)
	}
	if len(eligible) == 0 {
		return Instance{}, "no replica is eligible for promotion: " + orNone(skipped), false
	}
	histories := make([]gtid.Set, len(eligible))
	for i, in := range eligible {
		histories[i] = in.History()
	}
	best, ok := gtid.MostAdvanced(histories)
	if !ok {
		return Instance{}, "the GTID histories of the eligible replicas diverge: " + describeHistories(eligible), false
	}
	cand := eligible[best]
	if why := o.UnseenParticipant(primary, cand.Name); why != "" {
		return Instance{}, why, false
	}
	if ahead, missing := o.aheadOf(cand, primary); ahead != "" {
		return Instance{}, fmt.Sprintf("%s holds transactions the best eligible replica %s lacks (%s); promoting %s would lose them",
			ahead, cand.Name, missing, cand.Name), false
	}
	return cand, "", true
}

// aheadOf names a replica that answered (neither the old primary p nor diverged) holding
// transactions target lacks, and those transactions; "" when there is none.
func (o *Observation) aheadOf(target Instance, p string) (string, gtid.Set) {
	for _, in := range o.Instances {
		if in.Name == p || in.Name == target.Name || !in.Reachable || o.diverged(in.Name) {
			continue
		}
		if missing := in.History().Subtract(target.History()); !missing.IsEmpty() {
			return in.Name, missing
		}
	}
	return "", gtid.Set{}
}

func describeHistories(ins []Instance) string {
	parts := make([]string, len(ins))
	for i, in := range ins {
		parts[i] = in.Name + "=" + quoteEmpty(in.History().String())
	}
	return strings.Join(parts, "; ")
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "no replica"
	}
	return strings.Join(s, ", ")
}
