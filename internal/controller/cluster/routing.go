package cluster

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// planRelabel brings the role and routable labels of existing Pods in line with the status and
// the replicas' reports. Changes that take role=primary away come first, so rw never selects two
// Pods. A Pod being deleted keeps its role and loses its routable label (kube-proxy still sends
// new connections to a terminating endpoint that serves when no other is ready), and so does a
// suspected primary (failover.PrimarySuspected): its manager may be frozen while its mysqld takes
// writes. rw selects the Pod of status.currentPrimary by name (specs.RoleSelector), so a change
// of primary moves it by one update of the Service, not by these labels.
func (d *Decision) planRelabel(c *v1.Cluster, o Observation, active []observedInstance) {
	var demote, rest []podRelabel
	suspected := failover.PrimarySuspected(d.failoverObservation)
	for _, in := range active {
		p := in.Pod
		if p == nil {
			continue
		}
		role := specs.InstanceRole(c, p.Name)
		oldRole := p.Labels[v1.RoleLabel]
		oldRoutable := p.Labels[v1.RoutableLabel] == specs.RoutableTrue
		if p.DeletionTimestamp != nil {
			// Its role stays what it was: the Pod is going, and a new one is labelled afresh.
			role = oldRole
		}
		ending := endingSessions(o.Reports[p.Name], role)
		d.endingSessions = d.endingSessions || ending
		routable := specs.InstanceRoutable(c, p.Name) && p.DeletionTimestamp == nil &&
			!(suspected && p.Name == c.Status.CurrentPrimary) && !ending &&
			(role != v1.RoleReplica || replicaServesReads(o.Reports[p.Name], oldRoutable, o.MaxReadLag))
		if role == oldRole && routable == oldRoutable {
			continue
		}
		r := podRelabel{Pod: p.Name, Role: role, Routable: routable}
		if oldRole == v1.RolePrimary {
			demote = append(demote, r)
		} else {
			rest = append(rest, r)
		}
		if d.relabelEvents == nil {
			d.relabelEvents = map[string]kit.Event{}
		}
		d.relabelEvents[p.Name] = evRoleChanged.With(p.Name, oldRole, role, oldRoutable, routable)
	}
	d.Relabel = append(demote, rest...)
}

// endingSessionsRequeue is how soon a Cluster is reconciled again while an instance reports
// ending client sessions: its sweep lasts a few seconds, and it serves reads again only once a
// reconcile sees it over.
const endingSessionsRequeue = 500 * time.Millisecond

// endingSessions says a demoted instance, now in a role other than primary, reports that it
// still ends every client session (instance.SessionSweep): it must not serve reads meanwhile.
// The primary is not held back by it: a primary that takes writes again stops the sweep.
func endingSessions(report *instanceclient.Status, role string) bool {
	return role != v1.RolePrimary && report != nil && report.EndingSessions
}

// replicaServesReads says whether a replica's reads are fresh enough to route: its applier runs
// without error and its lag is within bound. Once excluded it returns only when the lag is within
// half the bound, so a replica hovering at the bound does not flap. A replica whose source is gone
// (its receiver in error or reconnecting, its lag unknown: a killed or lost primary) is not broken:
// a routable one keeps serving stale reads, as its readiness says, and an excluded one stays out
// until its lag is known again. Without a report (or a bound) nothing changes.
func replicaServesReads(report *instanceclient.Status, routableNow bool, bound time.Duration) bool {
	if report == nil || report.Replication == nil || bound <= 0 {
		return true
	}
	r := report.Replication
	if !r.SQLRunning || r.LastSQLError != "" || r.LastSQLErrno != 0 {
		return false
	}
	if r.LagSeconds < 0 {
		return routableNow
	}
	lag := time.Duration(r.LagSeconds) * time.Second
	if routableNow {
		return lag <= bound
	}
	return lag <= bound/2
}

// planServices lists the desired Services (per-instance headless ones for the active instances,
// the enabled default role Services, the additional ones) and the owned Services to delete.
func (d *Decision) planServices(c *v1.Cluster, existing []corev1.Service, active []observedInstance) {
	for _, in := range active {
		d.Services = append(d.Services, specs.BuildInstanceService(c, in.Name))
	}
	d.Services = append(d.Services, specs.BuildDefaultServices(c)...)
	d.Services = append(d.Services, specs.BuildAdditionalServices(c)...)
	wanted := make([]string, 0, len(d.Services))
	for _, s := range d.Services {
		wanted = append(wanted, s.Name)
	}
	for _, s := range existing {
		if s.DeletionTimestamp == nil && !slices.Contains(wanted, s.Name) {
			d.DeleteServices = append(d.DeleteServices, s.Name)
			d.event(stepServices, evServiceDeleted.With(s.Name))
		}
	}
}

// roleServiceNames are the names of the Services that route client traffic to instances (the
// enabled defaults and the additional ones): every server certificate carries them.
func roleServiceNames(c *v1.Cluster) []string {
	var out []string
	for _, s := range specs.BuildDefaultServices(c) {
		out = append(out, s.Name)
	}
	for _, s := range specs.BuildAdditionalServices(c) {
		out = append(out, s.Name)
	}
	return out
}
