package failover

import (
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// promotedSinceFailing reports whether the current primary was promoted after the failure that
// status.primaryFailingSince records: a failover replaced the failing primary, and that
// failure belongs to its predecessor. It is decided from durable facts only, whatever the
// operator observed between two reconciles (it may see nothing of a failover but its end state).
//
// The operator records the failing instance (status.failingPrimary) with primaryFailingSince;
// a failover never promotes the instance it replaces, so the primary changed exactly when the
// current primary is another instance. Timestamps cannot decide it: the API keeps them to the
// second, so a failover that completes within the second of its failure records the new
// primary's promotion at the very time the failure was recorded, and the promotion is stamped
// by the new primary's own clock, which may run seconds behind the operator's. Only a status
// written by an operator that predates status.failingPrimary is judged by the timestamps.
func promotedSinceFailing(current, failing string, promotedAt, failingSince time.Time) bool {
	switch {
	case failingSince.IsZero() || current == "":
		return false
	case failing != "":
		return current != failing
	}
	return promotedAt.After(failingSince)
}

// promotedSinceFailing is the rule above for the observed status.
func (st Status) promotedSinceFailing() bool {
	return promotedSinceFailing(st.CurrentPrimary, st.FailingPrimary, st.CurrentPrimaryTimestamp, st.PrimaryFailingSince)
}

// ClusterPromotedSinceFailing is promotedSinceFailing of a Cluster's status, for readers outside
// the decision (the instance manager's role reconciler).
func ClusterPromotedSinceFailing(cs *v1.ClusterStatus) bool {
	var promotedAt, since time.Time
	if cs.CurrentPrimaryTimestamp != nil {
		promotedAt = cs.CurrentPrimaryTimestamp.Time
	}
	if cs.PrimaryFailingSince != nil {
		since = cs.PrimaryFailingSince.Time
	}
	return promotedSinceFailing(cs.CurrentPrimary, cs.FailingPrimary, promotedAt, since)
}
