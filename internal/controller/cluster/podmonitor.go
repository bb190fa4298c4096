package cluster

import (
	"fmt"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// The operator keeps a Cluster's PodMonitor (spec.monitoring.podMonitor) without watching
// PodMonitors: a watch of a kind that is not installed keeps the manager from starting, and
// prometheus-operator's CRDs are optional. PodMonitors are read uncached (APIReader), only while
// one is asked for or may remain from before, and a PodMonitor changed by someone else is put back
// by the next periodic reconcile (ReportInterval).
//
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors,verbs=get;list;watch;create;update;patch;delete

// Condition reasons of v1.ConditionPodMonitorReady.
const (
	reasonPodMonitorApplied     = "PodMonitorApplied"
	reasonPodMonitorUnavailable = "PodMonitorUnavailable"
	reasonPodMonitorNotOwned    = "PodMonitorNotOwned"
	reasonPodMonitorWriteFailed = "PodMonitorWriteFailed"
	reasonPodMonitorDeleting    = "PodMonitorDeleting"
)

// The Events of the PodMonitor; the Warnings are emitted once per transition of the
// PodMonitorReady condition into their reason.
var (
	evPodMonitorCreated = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "PodMonitorCreated",
		Format: "Created PodMonitor %s"}
	evPodMonitorUpdated = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "PodMonitorUpdated",
		Format: "Updated PodMonitor %s to spec.monitoring.podMonitor"}
	evPodMonitorDeleted = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "PodMonitorDeleted",
		Format: "Deleted PodMonitor %s: spec.monitoring.podMonitor is off"}
	evPodMonitorUnavailable = kit.EventKind{Type: corev1.EventTypeWarning, Reason: reasonPodMonitorUnavailable,
		Format: "%s"}
	evPodMonitorNotOwned = kit.EventKind{Type: corev1.EventTypeWarning, Reason: reasonPodMonitorNotOwned,
		Format: "%s"}
	evPodMonitorWriteFailed = kit.EventKind{Type: corev1.EventTypeWarning, Reason: reasonPodMonitorWriteFailed,
		Format: "%s"}
)

// PodMonitorObservation is what gather learnt of the Cluster's PodMonitor (podmonitor_gather.go).
type PodMonitorObservation struct {
	// Looked says gather looked: it does while the Cluster asks for a PodMonitor, carries the
	// PodMonitorReady condition, or the last write failed; otherwise the rest is empty.
	Looked bool
	// Unavailable, when not empty, says why PodMonitors can be neither read nor written (the kind
	// is not installed, the operator may not read them); Live is then unknown.
	Unavailable string
	// Live is the PodMonitor named after the Cluster, nil when there is none.
	Live *monitoringv1.PodMonitor
	// LastWriteError is the error of this operator's last write of it; empty when it succeeded.
	LastWriteError string
}

// PodMonitorWork is what act does to the Cluster's PodMonitor (stepPodMonitor): at most one of
// its fields is set.
type PodMonitorWork struct {
	// Create is the PodMonitor to create.
	Create *monitoringv1.PodMonitor
	// Update is the live PodMonitor with the desired labels and spec, patched over Live.
	Update, Live *monitoringv1.PodMonitor
	// Delete is the live PodMonitor the Cluster controls, deleted when none is asked for.
	Delete *monitoringv1.PodMonitor
}

// PodMonitorPlan is the decision about the PodMonitor: the work, and the PodMonitorReady
// condition (nil: the Cluster carries none).
type PodMonitorPlan struct {
	Work      PodMonitorWork
	Condition *metav1.Condition
}

// DecidePodMonitor decides the Cluster's PodMonitor: created when asked for and absent, updated
// when it differs from specs.BuildPodMonitor, deleted when no longer asked for and the Cluster
// controls it; one the Cluster does not control is never touched, and nothing is done while the
// kind cannot be used. The condition says which of these holds.
func DecidePodMonitor(c *v1.Cluster, o PodMonitorObservation) PodMonitorPlan {
	name := specs.PodMonitorName(c.Name)
	cond := func(status metav1.ConditionStatus, reason, msg string) *metav1.Condition {
		return &metav1.Condition{Type: v1.ConditionPodMonitorReady, Status: status, Reason: reason, Message: msg, ObservedGeneration: c.Generation}
	}
	if !o.Looked || !c.PodMonitorEnabled() {
		var p PodMonitorPlan
		if o.Unavailable == "" && o.Live != nil && metav1.IsControlledBy(o.Live, c) {
			// The condition stays until the deletion is seen done: the PodMonitor is looked for
			// while the Cluster carries it, so a deletion a failing step kept from running is
			// not forgotten.
			p.Work.Delete = o.Live
			p.Condition = cond(metav1.ConditionFalse, reasonPodMonitorDeleting,
				fmt.Sprintf("PodMonitor %s is no longer asked for: deleting it", name))
		}
		return p
	}
	if o.Unavailable != "" {
		return PodMonitorPlan{Condition: cond(metav1.ConditionFalse, reasonPodMonitorUnavailable,
			fmt.Sprintf("Cannot keep PodMonitor %s: %s", name, o.Unavailable))}
	}
	if o.Live != nil && !metav1.IsControlledBy(o.Live, c) {
		return PodMonitorPlan{Condition: cond(metav1.ConditionFalse, reasonPodMonitorNotOwned,
			fmt.Sprintf("PodMonitor %s exists and the Cluster does not control it: it is left alone; delete it to let the operator create its own", name))}
	}
	want := specs.BuildPodMonitor(c)
	var p PodMonitorPlan
	switch {
	case o.Live == nil:
		p.Work.Create = want
	case !podMonitorMatches(o.Live, want):
		next := o.Live.DeepCopy()
		next.Labels, next.Spec = want.Labels, want.Spec
		p.Work.Update, p.Work.Live = next, o.Live
	}
	if o.LastWriteError != "" && (p.Work.Create != nil || p.Work.Update != nil) {
		p.Condition = cond(metav1.ConditionFalse, reasonPodMonitorWriteFailed,
			fmt.Sprintf("Writing PodMonitor %s failed, tried again: %s", name, o.LastWriteError))
		return p
	}
	p.Condition = cond(metav1.ConditionTrue, reasonPodMonitorApplied,
		fmt.Sprintf("PodMonitor %s scrapes the instances every %s", name, want.Spec.PodMetricsEndpoints[0].Interval))
	return p
}

// podMonitorMatches reports whether live has the labels and spec of want.
func podMonitorMatches(live, want *monitoringv1.PodMonitor) bool {
	return equality.Semantic.DeepEqual(live.Labels, want.Labels) && equality.Semantic.DeepEqual(live.Spec, want.Spec)
}

// planPodMonitor records DecidePodMonitor in d: the work, the condition in d.Status, and a
// Warning Event when the condition turns to a failure reason it did not have (stepStatus, so it
// is emitted once the status recording the transition is written).
func (d *Decision) planPodMonitor(c *v1.Cluster, o Observation) {
	p := DecidePodMonitor(c, o.PodMonitor)
	d.PodMonitor = p.Work
	if p.Condition == nil {
		meta.RemoveStatusCondition(&d.Status.Conditions, v1.ConditionPodMonitorReady)
		return
	}
	p.Condition.LastTransitionTime = metav1.NewTime(o.Now)
	prev := meta.FindStatusCondition(o.Cluster.Status.Conditions, v1.ConditionPodMonitorReady)
	meta.SetStatusCondition(&d.Status.Conditions, *p.Condition)
	if prev != nil && prev.Reason == p.Condition.Reason {
		return
	}
	switch p.Condition.Reason {
	case reasonPodMonitorUnavailable:
		d.event(stepStatus, evPodMonitorUnavailable.With(p.Condition.Message))
	case reasonPodMonitorNotOwned:
		d.event(stepStatus, evPodMonitorNotOwned.With(p.Condition.Message))
	case reasonPodMonitorWriteFailed:
		d.event(stepStatus, evPodMonitorWriteFailed.With(p.Condition.Message))
	}
}
