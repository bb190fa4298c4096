package retention

import (
	"strings"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	retentionpolicy "github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
)

const (
	// Interval is the least time between two retention passes of a Cluster.
	Interval = time.Hour
	// retryBase is the wait after the first failed pass; it doubles with each failure in a row,
	// up to Interval.
	retryBase = time.Minute
)

// Why a Cluster gets no retention pass. Every skip is logged with its reason.
const (
	skipDeleting      = "the Cluster is being deleted"
	skipNoPolicy      = "no retention policy (spec.backup.retentionPolicy, retentionCount, retentionSize)"
	skipNoObjectStore = "no object store (spec.backup.objectStore)"
	skipNoPrimary     = "no established primary yet (status.currentPrimary is empty)"
	skipInvalid       = "the retention policy is invalid"
	skipNotHeld       = "the Cluster does not hold its object store location (status.objectStoreLocation)"
)

// Observation is what the decision reads: the Cluster, its parsed policy and the time.
type Observation struct {
	Now     time.Time
	Cluster *v1.Cluster
	// LastCompleted is when the newest completed Backup of the Cluster completed (zero: none).
	LastCompleted time.Time
	Policy        retentionpolicy.Policy
	PolicyErr     error
}

// Decision says whether a pass runs now. Skip is set when none runs until the Cluster changes;
// otherwise Due says a pass runs now, or RequeueAfter when the next one is due.
type Decision struct {
	Skip         string
	Due          bool
	RequeueAfter time.Duration
	Events       []kit.Event
}

// Decide decides whether a Cluster's retention pass is due: hourly, and after each backup that
// completed since the last pass. A pass needs a policy, an object
// store and an established primary: status.currentPrimary is set only once an instance has taken
// the primary role, so a Cluster still bootstrapping (or restoring) never deletes anything.
// Passes run at most once per Interval after status.lastRetentionRunTime; a stamp more than one
// interval in the future (a clock that went back) is disregarded rather than blocking retention
// until then.
func Decide(o Observation) Decision {
	c := o.Cluster
	switch {
	case c.DeletionTimestamp != nil:
		return Decision{Skip: skipDeleting}
	case o.PolicyErr != nil:
		return Decision{Skip: skipInvalid, Events: []kit.Event{evInvalidPolicy.With(o.PolicyErr.Error())}}
	case o.Policy.IsZero():
		return Decision{Skip: skipNoPolicy}
	case c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil:
		return Decision{Skip: skipNoObjectStore}
	case c.Status.CurrentPrimary == "":
		return Decision{Skip: skipNoPrimary}
	case !c.HoldsObjectStoreLocation():
		return Decision{Skip: skipNotHeld}
	}
	last := c.Status.LastRetentionRunTime
	if last == nil || last.Time.After(o.Now.Add(Interval)) {
		return Decision{Due: true}
	}
	if !o.LastCompleted.IsZero() && !o.LastCompleted.Before(last.Time) {
		// A backup completed since the last pass: count and size limits hold again at once, so
		// the next backup starts with at most N and runs with at most N+1.
		return Decision{Due: true}
	}
	next := last.Add(Interval)
	if !o.Now.Before(next) {
		return Decision{Due: true}
	}
	return Decision{RequeueAfter: next.Sub(o.Now)}
}

// backoff is the wait before retrying after failures failed passes in a row: one minute,
// doubling, at most Interval.
func backoff(failures int) time.Duration {
	d := retryBase
	for i := 1; i < failures && d < Interval; i++ {
		d *= 2
	}
	return min(d, Interval)
}

// Outcome is what follows a pass: whether to stamp lastRetentionRunTime, the Events and when to
// look again.
type Outcome struct {
	Stamp        bool
	Events       []kit.Event
	RequeueAfter time.Duration
}

// DecideOutcome decides what a pass of policy that ended with report and err leads to. A
// success is stamped and looked at again after Interval, with a Normal Event only when it
// deleted something; a failure is not stamped, emits a Warning and is retried with backoff
// (failures counts it). What a failed pass already deleted is still reported in its Event.
func DecideOutcome(policy string, report retentionpass.Report, err error, failures int) Outcome {
	if err != nil {
		msg := err.Error()
		if report.DeletedAnything() {
			msg += "; before failing it deleted " + describeDeleted(report)
		}
		return Outcome{RequeueAfter: backoff(failures),
			Events: []kit.Event{evPassFailed.With(msg, backoff(failures))}}
	}
	out := Outcome{Stamp: true, RequeueAfter: Interval}
	if report.DeletedAnything() {
		out.Events = []kit.Event{evPassDeleted.With(policy, describeDeleted(report))}
	}
	if n := len(report.Unreadable); n > 0 {
		out.Events = append(out.Events, evUnreadable.With(n, describeRefs(report.Unreadable)))
	}
	if n := len(report.Unrestorable); n > 0 {
		out.Events = append(out.Events, evUnrestorable.With(n, describeRefs(report.Unrestorable)))
	}
	if n := len(report.Foreign); n > 0 {
		out.Events = append(out.Events, evForeign.With(n, strings.Join(report.ForeignNamespaces, ", "),
			describeRefs(report.Foreign)))
	}
	return out
}
