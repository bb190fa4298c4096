package failover

import (
	"strconv"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// UpdateTargetMaxLagSeconds is the most applier lag (seconds behind its source) a replica may have
// to be the target of an update's switchover.
const UpdateTargetMaxLagSeconds = 2

// UpdateTarget picks the replica an unsupervised rolling update switches over to before it
// updates the primary: among the replicas updated says run the new spec, those a switchover would
// accept now (a ready, read-only replica receiving from the primary and applying without error,
// neither fenced nor diverged, holding no transaction the primary lacks, at most
// UpdateTargetMaxLagSeconds behind), the one whose history contains every other's; the earliest in
// Observation.Instances on ties. The primary must be seen accepting writes and no failover may be
// recorded: a primary change is never started on top of a failing one. It returns the target, or
// "" and why none is chosen now. The switchover it starts still waits for the target to hold the
// primary's set before demoting anyone (decideSwitchover): a lagging target costs time, never
// transactions, and the lag bound keeps that time short.
func UpdateTarget(o Observation, updated func(string) bool) (string, string) {
	st := o.Status
	p := st.CurrentPrimary
	switch {
	case p == "" || st.TargetPrimary != p:
		return "", "a primary change is under way"
	case !st.PrimaryFailingSince.IsZero():
		return "", "the primary " + p + " is recorded failing"
	case o.fenced(p):
		return "", "the primary " + p + " is fenced"
	}
	old, _ := o.instance(p)
	if !old.SeenWritable() {
		return "", "the primary " + p + " is not seen accepting writes"
	}
	var eligible []Instance
	var skipped []string
	for _, in := range o.Instances {
		if in.Name == p {
			continue
		}
		if !updated(in.Name) {
			skipped = append(skipped, in.Name+" (not updated)")
			continue
		}
		if why := o.switchoverIneligible(in, p, true, false); why != "" {
			skipped = append(skipped, in.Name+" ("+why+")")
			continue
		}
		if errant := errantOf(in, old.Executed); !errant.IsEmpty() {
			skipped = append(skipped, in.Name+" (transactions the primary never had: "+errant.String()+")")
			continue
		}
		if lag := in.Replication.LagSeconds; lag < 0 || lag > UpdateTargetMaxLagSeconds {
			// The primary stops taking writes as soon as the switchover starts: a target that
			// must first apply a backlog turns that backlog into a write outage.
			skipped = append(skipped, in.Name+" (applier lag "+strconv.FormatInt(lag, 10)+" s)")
			continue
		}
		eligible = append(eligible, in)
	}
	if len(eligible) == 0 {
		return "", "no updated replica can take over: " + orNone(skipped)
	}
	histories := make([]gtid.Set, len(eligible))
	for i, in := range eligible {
		histories[i] = in.History()
	}
	best, ok := gtid.MostAdvanced(histories)
	if !ok {
		return "", "the GTID histories of the updated replicas diverge: " + describeHistories(eligible)
	}
	return eligible[best].Name, ""
}
