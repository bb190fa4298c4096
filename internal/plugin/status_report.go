package plugin

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// StatusReport is what `status` shows, as `-o json` and `-o yaml` print it: every field comes
// from what the operator and the instances wrote to the API.
type StatusReport struct {
	Cluster string `json:"cluster"`
	// OperatorWarning says the operator seems not to act on the Cluster (OperatorSilence).
	OperatorWarning      string                        `json:"operatorWarning,omitempty"`
	Primary              string                        `json:"primary,omitempty"`
	PrimarySince         *metav1.Time                  `json:"primarySince,omitempty"`
	TargetPrimary        string                        `json:"targetPrimary,omitempty"`
	SwitchoverInProgress bool                          `json:"switchoverInProgress"`
	PrimaryFailingSince  *metav1.Time                  `json:"primaryFailingSince,omitempty"`
	FailingPrimary       string                        `json:"failingPrimary,omitempty"`
	Lease                LeaseReport                   `json:"lease"`
	SemiSync             *v1.SemiSyncStatus            `json:"semiSync,omitempty"`
	FailoverReadiness    *v1.FailoverReadiness         `json:"failoverReadiness,omitempty"`
	PendingUpdates       []v1.PendingUpdate            `json:"pendingUpdates,omitempty"`
	Instances            []InstanceReport              `json:"instances"`
	ObjectStoreLocation  *v1.ObjectStoreLocationStatus `json:"objectStoreLocation,omitempty"`
	Backups              *v1.BackupsStatus             `json:"backups,omitempty"`
	LastVerification     *v1.LastVerifiedBackup        `json:"lastVerification,omitempty"`
	BinlogArchive        *v1.BinlogArchiveStatus       `json:"binlogArchive,omitempty"`
	Conditions           []metav1.Condition            `json:"conditions,omitempty"`
	Events               []EventReport                 `json:"events,omitempty"`
}

// LeaseReport is the primary Lease.
type LeaseReport struct {
	Name       string `json:"name"`
	Holder     string `json:"holder,omitempty"`
	RenewedAgo string `json:"renewedAgo,omitempty"`
	TTL        string `json:"ttl,omitempty"`
	Valid      bool   `json:"valid"`
	Error      string `json:"error,omitempty"`
	// Text is the one-line description the table shows.
	Text string `json:"-"`
}

// InstanceReport is one instance Pod.
type InstanceReport struct {
	Name         string `json:"name"`
	Role         string `json:"role,omitempty"`
	Ready        bool   `json:"ready"`
	Fenced       string `json:"fenced"`
	Diverged     bool   `json:"diverged"`
	GTIDExecuted string `json:"gtidExecuted,omitempty"`
	// Missing are the primary's transactions this instance has not executed (as last reported),
	// Errant those it executed that the primary has not.
	// Compared is false when either set is unknown (not reported, or the primary itself).
	Compared     bool   `json:"compared"`
	Missing      string `json:"missing,omitempty"`
	MissingCount uint64 `json:"missingCount"`
	Errant       string `json:"errant,omitempty"`
	ErrantCount  uint64 `json:"errantCount"`
	// Replication is the instance's channel as the operator last recorded it; nil for the
	// primary and for an instance that did not answer the operator.
	Replication *v1.InstanceReplicationStatus `json:"replication,omitempty"`
	Age         string                        `json:"age,omitempty"`
	Restarts    int32                         `json:"restarts"`
	Node        string                        `json:"node,omitempty"`
}

// EventReport is one Event of the Cluster or its objects.
type EventReport struct {
	Type     string      `json:"type"`
	Reason   string      `json:"reason"`
	Object   string      `json:"object"`
	Message  string      `json:"message"`
	LastSeen metav1.Time `json:"lastSeen"`
	Count    int32       `json:"count,omitempty"`
}

// maxEvents is how many of the newest Events the table shows (--verbose: all).
const maxEvents = 10

// BuildStatusReport gathers v into a report at now.
func BuildStatusReport(v *ClusterView, now time.Time) StatusReport {
	c, st := v.Cluster, v.Cluster.Status
	r := StatusReport{Cluster: c.Namespace + "/" + c.Name, Primary: st.CurrentPrimary, PrimarySince: st.CurrentPrimaryTimestamp,
		TargetPrimary: st.TargetPrimary, SwitchoverInProgress: st.TargetPrimary != st.CurrentPrimary,
		PrimaryFailingSince: st.PrimaryFailingSince, FailingPrimary: st.FailingPrimary,
		Lease:           leaseReport(specs.PrimaryLeaseName(c.Name), v, now),
		OperatorWarning: OperatorSilence(c, now), FailoverReadiness: st.FailoverReadiness, PendingUpdates: st.PendingUpdates,
		SemiSync: st.SemiSync, ObjectStoreLocation: st.ObjectStoreLocation, Backups: st.Backups,
		LastVerification: st.LastVerifiedBackup, BinlogArchive: st.BinlogArchive, Conditions: st.Conditions}
	requested, _ := c.FencedInstancesRequested()
	primary, primaryErr := gtid.Parse(st.GTIDExecutedByInstance[st.CurrentPrimary])
	for _, p := range sortedBySerial(c.Name, v.Pods) {
		i := InstanceReport{Name: p.Name, Role: p.Labels[v1.RoleLabel], Ready: instances.PodReady(&p),
			Fenced: fencedState(st.FencedInstances, requested, p.Name), Diverged: slices.Contains(st.DivergedInstances, p.Name),
			GTIDExecuted: st.GTIDExecutedByInstance[p.Name], Node: p.Spec.NodeName, Restarts: restarts(&p)}
		if rep, ok := st.InstanceReplication[p.Name]; ok {
			i.Replication = &rep
		}
		if !p.CreationTimestamp.IsZero() {
			i.Age = max(now.Sub(p.CreationTimestamp.Time), 0).Round(time.Second).String()
		}
		if own, err := gtid.Parse(i.GTIDExecuted); err == nil && primaryErr == nil && i.GTIDExecuted != "" &&
			st.GTIDExecutedByInstance[st.CurrentPrimary] != "" && p.Name != st.CurrentPrimary {
			missing, errant := primary.Subtract(own), own.Subtract(primary)
			i.Compared, i.Missing, i.MissingCount = true, missing.String(), missing.Count()
			i.Errant, i.ErrantCount = errant.String(), errant.Count()
		}
		r.Instances = append(r.Instances, i)
	}
	for _, e := range v.Events {
		r.Events = append(r.Events, EventReport{Type: e.Type, Reason: e.Reason, Object: e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name,
			Message: e.Message, LastSeen: eventTime(e), Count: e.Count})
	}
	slices.SortStableFunc(r.Events, func(a, b EventReport) int { return b.LastSeen.Compare(a.LastSeen.Time) })
	return r
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

// eventTime is when an Event was last seen.
func eventTime(e corev1.Event) metav1.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp
	case !e.EventTime.IsZero():
		return metav1.NewTime(e.EventTime.Time)
	}
	return e.CreationTimestamp
}

// leaseReport says who holds the primary Lease and whether it is still valid at now, with the
// one line the table shows.
func leaseReport(name string, v *ClusterView, now time.Time) LeaseReport {
	r := LeaseReport{Name: name}
	l := v.Lease
	switch {
	case v.LeaseErr != nil:
		r.Error = v.LeaseErr.Error()
		r.Text = fmt.Sprintf("%s unknown: %v", name, v.LeaseErr)
		return r
	case l == nil:
		r.Text = name + " not held"
		return r
	}
	holder := "nobody"
	if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
		r.Holder, holder = *l.Spec.HolderIdentity, *l.Spec.HolderIdentity
	}
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		r.Text = fmt.Sprintf("%s held by %s, never renewed", name, holder)
		return r
	}
	ttl := time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	age := now.Sub(l.Spec.RenewTime.Time).Truncate(time.Second)
	r.RenewedAgo, r.TTL, r.Valid = age.String(), ttl.String(), age <= ttl
	state := "valid"
	if !r.Valid {
		state = "expired"
	}
	r.Text = fmt.Sprintf("%s held by %s, renewed %s ago (TTL %s, %s)", name, holder, age, ttl, state)
	return r
}
