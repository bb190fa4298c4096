package failover

import (
	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// Labels are the role and routable labels one instance's Pod should carry. The role Services
// select on them: rw on role=primary, ro on role=replica, r on any, all with routable=true.
type Labels struct {
	Instance string
	// Role is v1.RolePrimary, v1.RoleReplica, or "" for the target of a primary change until it
	// records itself as status.currentPrimary (it is then in no role Service).
	Role     string
	Routable bool
}

// RoleLabels returns the labels of every observed instance, in order. Only status.currentPrimary
// is labelled primary, so rw never selects two Pods: the label moves when the promoted instance
// records itself, which it does only once it accepts writes. Fenced and diverged instances, and
// Pods being deleted, are not routable. A replica stays routable while its source is gone (its
// reads are stale, and its lag says how much); one that answered with its SQL thread stopped or
// failed is broken and leaves. A replica that did not answer keeps its current routable label:
// its Pod's readiness decides whether the Services send it traffic. A suspected primary
// (PrimarySuspected) keeps its role and leaves routing.
func RoleLabels(o Observation) []Labels {
	st := o.Status
	out := make([]Labels, 0, len(o.Instances))
	for _, in := range o.Instances {
		l := Labels{Instance: in.Name, Role: v1.RoleReplica,
			Routable: !o.fenced(in.Name) && !o.diverged(in.Name) && !in.PodDeleting}
		switch {
		case in.Name == st.CurrentPrimary:
			l.Role = v1.RolePrimary
			l.Routable = l.Routable && !PrimarySuspected(o)
		case in.Name == st.TargetPrimary && st.CurrentPrimary == "":
			l.Role = "" // a first instance, until it reports (a later target stays a replica, specs.InstanceRole)
		case !in.Reachable:
			l.Routable = l.Routable && in.LabelRoutable
		case in.Replication != nil && (!in.Replication.SQLRunning || in.Replication.SQLLastError != ""):
			l.Routable = false
		}
		out = append(out, l)
	}
	return out
}
