package cluster

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

// Condition reasons of the Cluster.
const (
	reasonClusterReady         = "ClusterReady"
	reasonInstancesNotReady    = "InstancesNotReady"
	reasonPrimaryPending       = "PrimaryPending"
	reasonScaling              = "Scaling"
	reasonRollingUpdate        = "RollingUpdate"
	reasonPrimaryUpdatePending = "PrimaryUpdatePending"
	// The steps of an unsupervised primary update, and the wait of a supervised one.
	reasonPrimaryUpdateSwitchover = "PrimaryUpdateSwitchover"
	reasonPrimaryUpdateRestart    = "PrimaryUpdateRestart"
	reasonPrimaryUpdateSupervised = "PrimaryUpdateWaitingForPromote"
	reasonConverged               = "Converged"
	reasonHealthy                 = "Healthy"
	reasonInstanceUnanswered      = "InstanceUnreachable"
	reasonScaleDownBlocked        = "ScaleDownBlocked"
	reasonDivergedInstances       = "DivergedInstances"
	reasonPrimaryUnknown          = "PrimaryUnknown"
)

// aggregateStatus returns c's new status: counts from the Pods, the last reported GTID set and
// replication channel of each instance, the primary's semi-sync state, whether a failover would
// be safe now, the updates instances wait for, and the three conditions. c.Status already carries this
// reconcile's targetPrimary and latestGeneratedNode; d says what this reconcile changes.
func aggregateStatus(c *v1.Cluster, o Observation, active []observedInstance, d *Decision) v1.ClusterStatus {
	st := *c.Status.DeepCopy()
	st.ObservedGeneration = c.Generation
	st.Instances, st.ReadyInstances = 0, 0
	names := make([]string, 0, len(active))
	for _, in := range active {
		names = append(names, in.Name)
		if in.Pod != nil && in.Pod.DeletionTimestamp == nil {
			st.Instances++
		}
		if instances.PodReady(in.Pod) {
			st.ReadyInstances++
		}
	}
	if primaryChanged(&st, active) {
		t := metav1.NewTime(o.Now)
		st.CurrentPrimaryTimestamp = &t
	}
	st.GTIDExecutedByInstance = aggregateGTIDs(st.GTIDExecutedByInstance, names, o.Reports)
	st.InstanceManagers = aggregateManagers(st.InstanceManagers, names, o.Reports)
	st.SemiSync = aggregateSemiSync(st.SemiSync, o.Reports[st.CurrentPrimary], o.Now)
	st.InstanceReplication = aggregateReplication(names, o.Reports)
	st.FailoverReadiness = failoverReadiness(st.FailoverReadiness, d.failoverObservation, o.Reports != nil || o.ReportErrors != nil)
	st.PendingUpdates = pendingUpdates(c, o, active)
	st.Parameters = aggregateParameters(c, names, o.Reports)
	setClusterConditions(&st, c, o, d)
	setParametersCondition(&st, c, metav1.NewTime(o.Now))
	if d.storageCondition.Type != "" {
		cond := d.storageCondition
		cond.ObservedGeneration, cond.LastTransitionTime = c.Generation, metav1.NewTime(o.Now)
		meta.SetStatusCondition(&st.Conditions, cond)
	}
	return st
}

// primaryChanged reports whether currentPrimaryTimestamp must be stamped now: a primary is known
// and either has no timestamp, or differs from the Pod labelled primary (the operator has not yet
// seen this promotion) while the timestamp predates the request that led to it, so it belongs to
// the previous primary. A timestamp the promoted instance wrote itself is kept.
func primaryChanged(st *v1.ClusterStatus, active []observedInstance) bool {
	if st.CurrentPrimary == "" {
		return false
	}
	if st.CurrentPrimaryTimestamp == nil {
		return true
	}
	labelled := ""
	for _, in := range active {
		if in.Pod != nil && in.Pod.Labels[v1.RoleLabel] == v1.RolePrimary {
			labelled = in.Name
		}
	}
	return labelled != "" && labelled != st.CurrentPrimary && st.TargetPrimaryTimestamp != nil &&
		st.CurrentPrimaryTimestamp.Before(st.TargetPrimaryTimestamp)
}

// aggregateGTIDs keeps the last reported gtid_executed of each active instance: a new report
// replaces it, an instance that did not answer keeps its last value, removed instances are dropped.
func aggregateGTIDs(prev map[string]string, active []string, reports map[string]*instanceclient.Status) map[string]string {
	out := map[string]string{}
	for _, name := range active {
		if r := reports[name]; r != nil {
			out[name] = r.GTIDExecuted
		} else if g, ok := prev[name]; ok {
			out[name] = g
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// aggregateManagers records the binary each instance manager reports running; an instance that
// did not answer keeps its last record.
func aggregateManagers(prev map[string]v1.InstanceManagerStatus, active []string, reports map[string]*instanceclient.Status) map[string]v1.InstanceManagerStatus {
	out := map[string]v1.InstanceManagerStatus{}
	for _, name := range active {
		if r := reports[name]; r != nil && r.Manager != nil && r.Manager.SHA256 != "" {
			out[name] = v1.InstanceManagerStatus{Version: r.Manager.Version, SHA256: r.Manager.SHA256}
		} else if m, ok := prev[name]; ok {
			out[name] = m
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// aggregateSemiSync mirrors the current primary's semi-sync report; LastTransitionTime moves only
// when Active flips. Without a report the last known state stays.
func aggregateSemiSync(prev *v1.SemiSyncStatus, primary *instanceclient.Status, now time.Time) *v1.SemiSyncStatus {
	if primary == nil || primary.SemiSync == nil {
		return prev
	}
	next := &v1.SemiSyncStatus{Active: primary.SemiSync.Active,
		WaitForReplicaCount: primary.SemiSync.WaitForReplicaCount, Clients: primary.SemiSync.Clients,
		FallenBack: primary.SemiSync.FallenBack, WaitingCommits: primary.AckWaiters}
	if prev != nil && prev.Active == next.Active {
		next.LastTransitionTime = prev.LastTransitionTime
	} else {
		t := metav1.NewTime(now)
		next.LastTransitionTime = &t
	}
	return next
}

// setClusterConditions computes Ready, Progressing and Degraded.
func setClusterConditions(st *v1.ClusterStatus, c *v1.Cluster, o Observation, d *Decision) {
	now := metav1.NewTime(o.Now)
	set := func(t string, ok bool, reason, msg string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason,
			Message: msg, ObservedGeneration: c.Generation, LastTransitionTime: now})
	}
	want := c.Spec.Instances
	primaryOK := st.CurrentPrimary != "" && st.CurrentPrimary == st.TargetPrimary
	switch {
	case st.ReadyInstances != want || st.Instances != want:
		set(v1.ConditionReady, false, reasonInstancesNotReady, fmt.Sprintf("%d of %d instances ready", st.ReadyInstances, want))
	case !primaryOK:
		set(v1.ConditionReady, false, reasonPrimaryPending, fmt.Sprintf("waiting for %s to become primary", st.TargetPrimary))
	default:
		set(v1.ConditionReady, true, reasonClusterReady, fmt.Sprintf("%d instances ready, primary %s", want, st.CurrentPrimary))
	}
	switch {
	case d.ScaleDownWait != "":
		set(v1.ConditionProgressing, true, reasonScaling, fmt.Sprintf("%d of %d instances exist; %s", st.Instances, want, d.ScaleDownWait))
	case len(d.CreatePods) > 0 || d.Detach != "" || st.Instances != want:
		set(v1.ConditionProgressing, true, reasonScaling, fmt.Sprintf("%d of %d instances exist", st.Instances, want))
	case len(d.DeletePods) > 0:
		set(v1.ConditionProgressing, true, reasonRollingUpdate, "replacing "+strings.Join(d.DeletePods, ", "))
	case d.Rollout != nil:
		set(v1.ConditionProgressing, true, d.Rollout.Reason, d.Rollout.Message)
	case !primaryOK:
		set(v1.ConditionProgressing, true, reasonPrimaryPending, fmt.Sprintf("waiting for %s to become primary", st.TargetPrimary))
	case st.ReadyInstances != want:
		set(v1.ConditionProgressing, true, reasonInstancesNotReady, fmt.Sprintf("%d of %d instances ready", st.ReadyInstances, want))
	default:
		set(v1.ConditionProgressing, false, reasonConverged, "the cluster matches its spec")
	}
	reason, msg := degradation(st, c, o, d)
	set(v1.ConditionDegraded, reason != "", orDefault(reason, reasonHealthy), orDefault(msg, "nothing needs attention"))
}

// divergedMessagePrefix starts the Degraded message that lists the diverged instances.
const divergedMessagePrefix = "diverged instances kept out of service: "

// degradation names what needs a user's attention, most serious first; empty when nothing does.
func degradation(st *v1.ClusterStatus, c *v1.Cluster, o Observation, d *Decision) (reason, msg string) {
	if d.PrimaryUnknown {
		return reasonPrimaryUnknown, "targetPrimary is empty and not exactly one instance reports itself primary: set status.targetPrimary"
	}
	if len(st.DivergedInstances) > 0 {
		return reasonDivergedInstances, divergedMessagePrefix + strings.Join(st.DivergedInstances, ", ")
	}
	active, _ := indexInstances(c, o.PVCs, o.Pods)
	if refused := versionRefusals(active); len(refused) > 0 {
		return reasonServerVersionRefused, "mysqld not started, the rolling update waits: " + strings.Join(refused, "; ")
	}
	if int32(len(active)) > c.Spec.Instances {
		if _, ok := scaleDownVictim(c, active); !ok {
			return reasonScaleDownBlocked, "only primaries are left to remove"
		}
	}
	if reason, msg := locationDegradation(st, c); reason != "" {
		return reason, msg
	}
	if len(o.ReportErrors) > 0 {
		names := make([]string, 0, len(o.ReportErrors))
		for n := range o.ReportErrors {
			names = append(names, n)
		}
		sort.Strings(names)
		return reasonInstanceUnanswered, "no status from " + strings.Join(names, ", ")
	}
	return "", ""
}

// conditionEvents returns the Events of condition transitions between old and the new status.
func conditionEvents(old []metav1.Condition, st v1.ClusterStatus, instances int32) []kit.Event {
	var out []kit.Event
	changed := func(t string) (*metav1.Condition, bool) {
		n := meta.FindStatusCondition(st.Conditions, t)
		o := meta.FindStatusCondition(old, t)
		return n, n != nil && (o == nil || o.Status != n.Status || o.Reason != n.Reason)
	}
	if n, ok := changed(v1.ConditionReady); ok {
		if n.Status == metav1.ConditionTrue {
			out = append(out, evReady.With(instances, st.CurrentPrimary))
		} else {
			out = append(out, evNotReady.With(n.Message))
		}
	}
	if n, ok := changed(v1.ConditionProgressing); ok && n.Status == metav1.ConditionTrue && n.Reason == reasonPrimaryUpdateSupervised {
		out = append(out, evPrimaryUpdateWaiting.With(n.Message))
	}
	if e, ok := parametersRefusedEvent(old, st); ok {
		out = append(out, e)
	}
	if e, ok := storageEvent(old, st); ok {
		out = append(out, e)
	}
	if n, ok := changed(v1.ConditionDegraded); ok {
		if n.Status == metav1.ConditionTrue && n.Reason == reasonScaleDownBlocked {
			out = append(out, evScaleDownBlocked.With(instances))
		} else if n.Status == metav1.ConditionTrue {
			out = append(out, evDegraded.With(n.Message))
		} else if meta.FindStatusCondition(old, v1.ConditionDegraded) != nil {
			out = append(out, evRecovered.With())
		}
	}
	return out
}

// statusChanged reports whether a status patch is needed.
func statusChanged(old, next v1.ClusterStatus) bool {
	return !equality.Semantic.DeepEqual(old, next)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
