package cluster

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

var testNow = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// world is a Cluster with instances as the API server would show them.
type world struct {
	o Observation
}

func newWorld(instances int32) *world {
	c := &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "uid", Generation: 1},
		Spec: v1.ClusterSpec{Instances: instances, ImageName: "mysql:8.4",
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")}},
	}
	return &world{o: Observation{Now: testNow, Cluster: c, OperatorImage: "op:1"}}
}

// instance adds instance serial with its PVC and, unless podless, a Pod (ready when ready).
func (w *world) instance(serial int32, ready bool) *world {
	c := w.o.Cluster
	w.o.PVCs = append(w.o.PVCs, *specs.BuildPVC(c, serial))
	pod := specs.BuildPod(c, serial, specs.PodOptions{OperatorImage: w.o.OperatorImage,
		Role: specs.InstanceRole(c, specs.InstanceName("db", serial)), Routable: true})
	if ready {
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	}
	w.o.Pods = append(w.o.Pods, *pod)
	return w
}

func (w *world) primary(current, target string) *world {
	w.o.Cluster.Status.CurrentPrimary, w.o.Cluster.Status.TargetPrimary = current, target
	return w
}

func (w *world) withoutPod(name string) *world {
	w.o.Pods = slices.DeleteFunc(w.o.Pods, func(p corev1.Pod) bool { return p.Name == name })
	return w
}

func (w *world) detached(name string) *world {
	for i := range w.o.PVCs {
		if w.o.PVCs[i].Name == name {
			w.o.PVCs[i].Annotations = map[string]string{specs.DetachedAnnotation: "x"}
		}
	}
	return w.withoutPod(name)
}

func (w *world) withPodBack(name string) *world {
	serial, _ := specs.InstanceSerial("db", name)
	w.o.Pods = append(w.o.Pods, *specs.BuildPod(w.o.Cluster, serial, specs.PodOptions{OperatorImage: w.o.OperatorImage}))
	return w
}

func (w *world) status(f func(*v1.ClusterStatus)) *world {
	f(&w.o.Cluster.Status)
	return w
}

func (w *world) reports(r map[string]*instanceclient.Status, errs map[string]string) *world {
	w.o.Reports, w.o.ReportErrors = r, errs
	return w
}

func (w *world) lagBound(d time.Duration) *world { w.o.MaxReadLag = d; return w }

func (w *world) newImage() *world { w.o.Cluster.Spec.ImageName = "mysql:9.0"; return w }

func (w *world) decide() Decision { return Decide(w.o) }

func namesOf[T any](items []T, name func(T) string) []string {
	out := []string{}
	for _, i := range items {
		out = append(out, name(i))
	}
	return out
}

func createdPodNames(d Decision) []string {
	return namesOf(d.CreatePods, func(p *corev1.Pod) string { return p.Name })
}

func createdPVCNames(d Decision) []string {
	return namesOf(d.CreatePVCs, func(p *corev1.PersistentVolumeClaim) string { return p.Name })
}

// stepEvents are the Events act emits once step succeeds: the step's own, and for stepRelabel
// those of each Pod relabelled (not those the act deletes), in the planned order.
func stepEvents(d Decision, step actStep) []kit.Event {
	var out []kit.Event
	if step == stepRelabel {
		for _, ch := range d.relabelAfterDeletions() {
			if e, ok := d.relabelEvents[ch.Pod]; ok {
				out = append(out, e)
			}
		}
	}
	return append(out, d.Events[step]...)
}

// eventReasons lists the reasons of every Event of the decision, in the order of act's steps.
func eventReasons(d Decision) []string {
	var all []kit.Event
	for step := stepSecrets; step <= stepSemiSync; step++ {
		all = append(all, stepEvents(d, step)...)
	}
	return namesOf(all, func(e kit.Event) string { return e.Kind.Reason })
}

// eventMessage is the message of d's first Event with reason, "" when none.
func eventMessage(d Decision, reason string) string {
	for step := stepSecrets; step <= stepSemiSync; step++ {
		for _, e := range stepEvents(d, step) {
			if e.Kind.Reason == reason {
				return e.Message
			}
		}
	}
	return ""
}

func condition(d Decision, t string) metav1.Condition {
	if c := meta.FindStatusCondition(d.Status.Conditions, t); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// ruleCase is one rule: a world and what the decision must do in it.
type ruleCase struct {
	rule  string
	world *world
	check func(t *testing.T, d Decision)
}

func runCases(t *testing.T, cases []ruleCase) {
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) { tc.check(t, tc.world.decide()) })
	}
}
