package cluster

import (
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// TestDecidePodMonitor: one row per rule of the Cluster's PodMonitor.
func TestDecidePodMonitor(t *testing.T) {
	cluster := func(enabled bool, labels map[string]v1.PodMonitorLabelValue) *v1.Cluster {
		w := newWorld(1)
		w.o.Cluster.Spec.Monitoring = &v1.MonitoringConfiguration{PodMonitor: &v1.PodMonitorConfiguration{Enabled: enabled, Labels: labels}}
		return w.o.Cluster
	}
	ours := func(labels map[string]v1.PodMonitorLabelValue) *monitoringv1.PodMonitor {
		pm := specs.BuildPodMonitor(cluster(true, labels))
		pm.ResourceVersion = "7"
		return pm
	}
	theirs := func() *monitoringv1.PodMonitor {
		pm := ours(nil)
		pm.OwnerReferences = nil
		return pm
	}
	seen := func(live *monitoringv1.PodMonitor) PodMonitorObservation {
		return PodMonitorObservation{Looked: true, Live: live}
	}
	const (
		none = iota
		create
		update
		del
	)
	for _, tc := range []struct {
		rule       string
		cluster    *v1.Cluster
		o          PodMonitorObservation
		wantWork   int
		wantStatus metav1.ConditionStatus // empty: no condition
		wantReason string
	}{
		{"nothing asked, nothing looked at: nothing done, no condition", newWorld(1).o.Cluster, PodMonitorObservation{}, none, "", ""},
		{"enabled and absent: created", cluster(true, nil), seen(nil), create, metav1.ConditionTrue, reasonPodMonitorApplied},
		{"enabled and as declared: left alone", cluster(true, nil), seen(ours(nil)), none, metav1.ConditionTrue, reasonPodMonitorApplied},
		{"enabled and the labels differ: updated", cluster(true, map[string]v1.PodMonitorLabelValue{"release": "prom"}), seen(ours(nil)),
			update, metav1.ConditionTrue, reasonPodMonitorApplied},
		{"enabled and the spec was edited by someone: updated back", cluster(true, nil), func() PodMonitorObservation {
			pm := ours(nil)
			pm.Spec.PodMetricsEndpoints[0].Interval = "5m"
			return seen(pm)
		}(), update, metav1.ConditionTrue, reasonPodMonitorApplied},
		{"enabled and one the Cluster does not control: left alone, reported", cluster(true, nil), seen(theirs()),
			none, metav1.ConditionFalse, reasonPodMonitorNotOwned},
		{"enabled and the kind is not installed: nothing done, reported", cluster(true, nil),
			PodMonitorObservation{Looked: true, Unavailable: podMonitorNotInstalled}, none, metav1.ConditionFalse, reasonPodMonitorUnavailable},
		{"enabled and the last write failed: tried again, reported", cluster(true, nil),
			PodMonitorObservation{Looked: true, LastWriteError: "forbidden"}, create, metav1.ConditionFalse, reasonPodMonitorWriteFailed},
		{"a failed write since done by someone else: applied", cluster(true, nil),
			PodMonitorObservation{Looked: true, Live: ours(nil), LastWriteError: "forbidden"}, none, metav1.ConditionTrue, reasonPodMonitorApplied},
		{"disabled and ours: deleted, the condition kept until the deletion is seen (so it is looked for again)",
			cluster(false, nil), seen(ours(nil)), del, metav1.ConditionFalse, reasonPodMonitorDeleting},
		{"disabled and theirs: left alone, no condition", cluster(false, nil), seen(theirs()), none, "", ""},
		{"disabled and absent: nothing, no condition", cluster(false, nil), seen(nil), none, "", ""},
		{"disabled and the kind is not installed: nothing, no condition", cluster(false, nil),
			PodMonitorObservation{Looked: true, Unavailable: podMonitorNotInstalled}, none, "", ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			p := DecidePodMonitor(tc.cluster, tc.o)
			work := none
			switch w := p.Work; {
			case w.Create != nil:
				work = create
			case w.Update != nil:
				work = update
			case w.Delete != nil:
				work = del
			}
			if work != tc.wantWork {
				t.Errorf("work %+v (%d), want %d", p.Work, work, tc.wantWork)
			}
			switch {
			case tc.wantStatus == "" && p.Condition != nil:
				t.Errorf("condition %+v, want none", *p.Condition)
			case tc.wantStatus != "" && (p.Condition == nil || p.Condition.Status != tc.wantStatus || p.Condition.Reason != tc.wantReason ||
				p.Condition.Type != v1.ConditionPodMonitorReady):
				t.Errorf("condition %+v, want %s %s", p.Condition, tc.wantStatus, tc.wantReason)
			}
			if p.Work.Create != nil && !podMonitorMatches(p.Work.Create, specs.BuildPodMonitor(tc.cluster)) {
				t.Errorf("creates %+v, not the built PodMonitor", p.Work.Create)
			}
			if u := p.Work.Update; u != nil && (!podMonitorMatches(u, specs.BuildPodMonitor(tc.cluster)) ||
				u.ResourceVersion != "7" || p.Work.Live != tc.o.Live) {
				t.Errorf("updates to %+v over %+v: want the built labels and spec over the live object", u, p.Work.Live)
			}
		})
	}
}

// TestPodMonitorConditionEvents: the Warning Event of a failure reason is recorded once, when the
// PodMonitorReady condition turns to it, and the condition is dropped when nothing is asked for.
func TestPodMonitorConditionEvents(t *testing.T) {
	unavailable := func(prev *metav1.Condition) Decision {
		w := newWorld(1).instance(1, true).primary("db-1", "db-1")
		w.o.Cluster.Spec.Monitoring = &v1.MonitoringConfiguration{PodMonitor: &v1.PodMonitorConfiguration{Enabled: true}}
		if prev != nil {
			w.o.Cluster.Status.Conditions = []metav1.Condition{*prev}
		}
		w.o.PodMonitor = PodMonitorObservation{Looked: true, Unavailable: podMonitorNotInstalled}
		return w.decide()
	}
	warnings := func(d Decision) []string {
		var out []string
		for _, e := range d.Events[stepStatus] {
			if e.Kind.Reason == reasonPodMonitorUnavailable {
				out = append(out, e.Message)
			}
		}
		return out
	}
	first := unavailable(nil)
	cond := meta.FindStatusCondition(first.Status.Conditions, v1.ConditionPodMonitorReady)
	if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "is not installed") {
		t.Fatalf("condition %+v, want False saying the kind is not installed", cond)
	}
	if got := warnings(first); len(got) != 1 || !strings.Contains(got[0], "is not installed") {
		t.Errorf("first reconcile without the kind: Events %q, want one PodMonitorUnavailable", got)
	}
	if got := warnings(unavailable(cond)); len(got) != 0 {
		t.Errorf("the condition already says so: Events %q, want none", got)
	}
	applied := cond.DeepCopy()
	applied.Status, applied.Reason = metav1.ConditionTrue, reasonPodMonitorApplied
	if got := warnings(unavailable(applied)); len(got) != 1 {
		t.Errorf("the kind went away after the PodMonitor was applied: Events %q, want one", got)
	}

	w := newWorld(1).instance(1, true).primary("db-1", "db-1")
	w.o.Cluster.Status.Conditions = []metav1.Condition{*cond}
	w.o.PodMonitor = PodMonitorObservation{Looked: true, Unavailable: podMonitorNotInstalled}
	if c := meta.FindStatusCondition(w.decide().Status.Conditions, v1.ConditionPodMonitorReady); c != nil {
		t.Errorf("no PodMonitor asked for: condition %+v, want none", *c)
	}
}

// TestPodMonitorKindRecheck: a kind found missing is trusted missing for
// PodMonitorRecheckInterval, then looked up again, so CRDs installed later are picked up; a kind
// found is looked up every time.
func TestPodMonitorKindRecheck(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	var m podMonitorMemory
	if why := m.kindUnavailable(mapper, testNow); why != podMonitorNotInstalled {
		t.Fatalf("without the kind: %q, want %q", why, podMonitorNotInstalled)
	}
	mapper.Add(monitoringv1.SchemeGroupVersion.WithKind(monitoringv1.PodMonitorsKind), meta.RESTScopeNamespace)
	if why := m.kindUnavailable(mapper, testNow.Add(PodMonitorRecheckInterval-time.Second)); why != podMonitorNotInstalled {
		t.Errorf("installed within the interval: %q, want the remembered answer", why)
	}
	if why := m.kindUnavailable(mapper, testNow.Add(PodMonitorRecheckInterval)); why != "" {
		t.Errorf("after the interval: %q, want the kind found", why)
	}
	if why := m.kindUnavailable(nil, testNow.Add(PodMonitorRecheckInterval)); why == "" {
		t.Error("without a mapper the kind was taken as installed")
	}
}
