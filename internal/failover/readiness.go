package failover

import (
	"fmt"
	"strings"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// Reasons of a Readiness, one per rule of AssessReadiness.
const (
	ReadinessNoPrimary             = "NoPrimary"
	ReadinessSeveralWriters        = "SeveralWriters"
	ReadinessPrimaryChangeUnderWay = "PrimaryChangeUnderWay"
	ReadinessPrimaryFenced         = "PrimaryFenced"
	ReadinessNoReplica             = "NoReplica"
	ReadinessNoCandidate           = "NoCandidate"
	ReadinessSemiSyncFallback      = "SemiSyncFallback"
	ReadinessAsyncCandidateBehind  = "AsyncCandidateBehind"
	ReadinessCandidateReady        = "CandidateReady"
)

// Readiness answers "would a failover of the current primary be safe now?": Safe when one would
// promote Candidate without losing a write the primary acknowledged. Reason names the rule that
// decided, Message says why and what would change it.
type Readiness struct {
	Safe      bool
	Reason    string
	Message   string
	Candidate string
}

// AssessReadiness applies to o the rules a failover from the current primary would follow if it
// started now (SelectCandidate, the semi-sync fallback record, the guards of Decide), whatever the
// primary's health: it tells an operator of the Cluster in advance what a failure would lead to.
// It decides nothing and starts nothing.
func AssessReadiness(o Observation) Readiness {
	st := o.Status
	p := st.CurrentPrimary
	unsafe := func(reason, format string, args ...any) Readiness {
		return Readiness{Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	if p == "" {
		return unsafe(ReadinessNoPrimary, "no established primary yet")
	}
	if writers := o.writable(); len(writers) > 1 {
		return unsafe(ReadinessSeveralWriters, "several instances accept writes (%s): nothing is promoted until a human fences all but one",
			strings.Join(writers, ", "))
	}
	if st.TargetPrimary != "" && st.TargetPrimary != p {
		r := unsafe(ReadinessPrimaryChangeUnderWay, "a primary change from %s to %s is under way", p, st.TargetPrimary)
		r.Candidate = st.TargetPrimary
		return r
	}
	if o.fenced(p) {
		return unsafe(ReadinessPrimaryFenced, "the primary %s is fenced: no failover starts while it is (kubectl cloudnative-mysql fence off)", p)
	}
	replicas := 0
	for _, in := range o.Instances {
		if in.Name != p {
			replicas++
		}
	}
	if replicas == 0 {
		return unsafe(ReadinessNoReplica, "%s is the only instance: there is no replica to fail over to", p)
	}
	cand, blocked, ok := o.SelectCandidate(p)
	if !ok {
		return unsafe(ReadinessNoCandidate, "a failover would be blocked: %s", blocked)
	}
	old, _ := o.instance(p)
	if risk, blocks, pending := o.acknowledgedAlone(old, cand); risk != "" && !pending {
		then := "a failover would promote " + cand.Name + " and they may be lost"
		if blocks && o.Spec.DataDurability == v1.DataDurabilityRequired {
			then = "a failover would be blocked until " + p + " comes back or a person accepts the loss"
		}
		r := unsafe(ReadinessSemiSyncFallback, "%s; %s", risk, then)
		r.Candidate = cand.Name
		return r
	}
	behind := cand.History()
	if missing := old.Executed.Subtract(behind); !o.Spec.SemiSync && old.Reachable && !missing.IsEmpty() {
		r := unsafe(ReadinessAsyncCandidateBehind, "semi-sync is off and %s lacks %d transaction(s) the primary %s committed: a failover now would lose them",
			cand.Name, missing.Count(), p)
		r.Candidate = cand.Name
		return r
	}
	msg := "a failover would promote " + cand.Name + ", the replica with the most complete history"
	if backlog := cand.Retrieved.Subtract(cand.Executed); !backlog.IsEmpty() {
		msg += fmt.Sprintf(", once it applies the %d transaction(s) it received", backlog.Count())
	}
	return Readiness{Safe: true, Reason: ReadinessCandidateReady, Message: msg, Candidate: cand.Name}
}
