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

// eventReasons lists the reasons of every Event of the decision, in the order of act's steps.
func eventReasons(d Decision) []string {
	var all []kit.Event
	for step := stepSecrets; step <= stepSemiSync; step++ {
		all = append(all, d.Events[step]...)
	}
	return namesOf(all, func(e kit.Event) string { return e.Kind.Reason })
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

func TestDecideScaleUp(t *testing.T) {
	runCases(t, []ruleCase{
		{"creation makes the first instance, targets it as primary and records its serial", newWorld(3),
			func(t *testing.T, d Decision) {
				if !slices.Equal(createdPVCNames(d), []string{"db-1"}) || !slices.Equal(createdPodNames(d), []string{"db-1"}) {
					t.Fatalf("PVCs %v Pods %v", createdPVCNames(d), createdPodNames(d))
				}
				if d.Status.TargetPrimary != "db-1" || d.Status.TargetPrimaryTimestamp == nil || d.Status.LatestGeneratedNode != 1 {
					t.Fatalf("status %+v", d.Status)
				}
				if !slices.Contains(eventReasons(d), "InstanceCreated") || !slices.Contains(eventReasons(d), "TargetPrimarySet") {
					t.Fatalf("events %v", eventReasons(d))
				}
			}},
		{"the first instance carries no role until it reports its promotion", newWorld(1),
			func(t *testing.T, d Decision) {
				if _, has := d.CreatePods[0].Labels[v1.RoleLabel]; has || d.CreatePods[0].Labels[v1.RoutableLabel] != "true" {
					t.Fatalf("labels %v", d.CreatePods[0].Labels)
				}
			}},
		{"replicas join one at a time: none while an instance is not ready", newWorld(3).instance(1, false).primary("", "db-1"),
			func(t *testing.T, d Decision) {
				if len(d.CreatePods)+len(d.CreatePVCs) != 0 {
					t.Fatalf("created %v %v", createdPVCNames(d), createdPodNames(d))
				}
			}},
		{"scale up adds the next serial once every instance is ready", newWorld(3).instance(1, true).primary("db-1", "db-1"),
			func(t *testing.T, d Decision) {
				if !slices.Equal(createdPodNames(d), []string{"db-2"}) || d.Status.LatestGeneratedNode != 2 {
					t.Fatalf("pods %v latest %d", createdPodNames(d), d.Status.LatestGeneratedNode)
				}
				if d.CreatePods[0].Labels[v1.RoleLabel] != "replica" {
					t.Fatalf("a new replica is labelled replica: %v", d.CreatePods[0].Labels)
				}
			}},
		{"serials are never reused: latestGeneratedNode counts", newWorld(2).instance(1, true).primary("db-1", "db-1").
			status(func(s *v1.ClusterStatus) { s.LatestGeneratedNode = 5 }),
			func(t *testing.T, d Decision) {
				if !slices.Equal(createdPodNames(d), []string{"db-6"}) {
					t.Fatalf("pods %v", createdPodNames(d))
				}
			}},
		{"serials are never reused: retained PVCs count even when the status lost track", newWorld(2).instance(1, true).
			instance(7, true).detached("db-7").primary("db-1", "db-1"),
			func(t *testing.T, d Decision) {
				if !slices.Equal(createdPodNames(d), []string{"db-8"}) || d.Status.LatestGeneratedNode != 8 {
					t.Fatalf("pods %v latest %d", createdPodNames(d), d.Status.LatestGeneratedNode)
				}
			}},
		{"a deleted Pod is recreated on its retained PVC, without a new PVC", newWorld(2).instance(1, true).instance(2, true).
			primary("db-1", "db-1").withoutPod("db-2"),
			func(t *testing.T, d Decision) {
				if !slices.Equal(createdPodNames(d), []string{"db-2"}) || len(d.CreatePVCs) != 0 || !slices.Contains(eventReasons(d), "InstanceRecreated") {
					t.Fatalf("pods %v pvcs %v", createdPodNames(d), createdPVCNames(d))
				}
			}},
		{"a detached PVC is neither an instance nor recreated", newWorld(1).instance(1, true).instance(2, true).
			primary("db-1", "db-1").detached("db-2"),
			func(t *testing.T, d Decision) {
				if len(d.CreatePods) != 0 || d.Detach != "" || !slices.Equal(d.Instances, []string{"db-1"}) {
					t.Fatalf("pods %v detach %q instances %v", createdPodNames(d), d.Detach, d.Instances)
				}
			}},
	})
}

func TestDecideScaleDown(t *testing.T) {
	runCases(t, []ruleCase{
		{"a Pod left on a detached PVC (an interrupted scale-down) is deleted", newWorld(1).instance(1, true).instance(2, true).
			primary("db-1", "db-1").detached("db-2").withPodBack("db-2"),
			func(t *testing.T, d Decision) {
				if !slices.Equal(d.DeletePods, []string{"db-2"}) || len(d.CreatePods) != 0 || !d.needsFreshLook() {
					t.Fatalf("delete %v create %v", d.DeletePods, createdPodNames(d))
				}
			}},
		{"a converged Cluster needs no live re-read", newWorld(1).primary("db-1", "db-1").instance(1, true),
			func(t *testing.T, d Decision) {
				if d.needsFreshLook() {
					t.Fatal("fresh look asked")
				}
			}},
		{"scale down removes the highest serial replica", newWorld(2).instance(1, true).instance(2, true).instance(3, true).
			primary("db-1", "db-1"),
			func(t *testing.T, d Decision) {
				if d.Detach != "db-3" || !slices.Contains(eventReasons(d), "InstanceRemoved") {
					t.Fatalf("detach %q", d.Detach)
				}
			}},
		{"scale down never removes the primary", newWorld(2).instance(1, true).instance(2, true).instance(3, true).
			primary("db-3", "db-3"),
			func(t *testing.T, d Decision) {
				if d.Detach != "db-2" {
					t.Fatalf("detach %q", d.Detach)
				}
			}},
		{"scale down never removes a switchover target", newWorld(2).instance(1, true).instance(2, true).instance(3, true).
			primary("db-1", "db-3"),
			func(t *testing.T, d Decision) {
				if d.Detach != "db-2" {
					t.Fatalf("detach %q", d.Detach)
				}
			}},
		{"scale down with only primaries left is blocked and reported", newWorld(1).instance(1, true).instance(2, true).
			primary("db-1", "db-2"),
			func(t *testing.T, d Decision) {
				if d.Detach != "" || !slices.Contains(eventReasons(d), "ScaleDownBlocked") || condition(d, v1.ConditionDegraded).Reason != reasonScaleDownBlocked {
					t.Fatalf("detach %q events %v", d.Detach, eventReasons(d))
				}
			}},
		{"scale down drops the removed instance's headless Service", newWorld(1).instance(1, true).instance(2, true).
			primary("db-1", "db-1"),
			func(t *testing.T, d Decision) {
				if d.Detach != "db-2" || slices.ContainsFunc(d.Services, func(s *corev1.Service) bool { return s.Name == "db-2" }) {
					t.Fatalf("detach %q services %v", d.Detach, namesOf(d.Services, func(s *corev1.Service) string { return s.Name }))
				}
			}},
	})
}

func TestDecideLostTargetPrimary(t *testing.T) {
	primaryReport := &instanceclient.Status{Role: v1.RolePrimary}
	lost := func() *world {
		return newWorld(3).instance(1, true).instance(2, true).status(func(s *v1.ClusterStatus) { s.LatestGeneratedNode = 2 })
	}
	for _, tc := range []struct {
		rule       string
		world      *world
		wantTarget string
	}{
		{"recovered from currentPrimary", lost().primary("db-2", ""), "db-2"},
		{"recovered from the one instance reporting itself primary",
			lost().reports(map[string]*instanceclient.Status{"db-2": primaryReport, "db-1": {Role: v1.RoleReplica}}, nil), "db-2"},
		{"never guessed when no instance reports itself primary", lost(), ""},
		{"never guessed when two instances report themselves primary",
			lost().reports(map[string]*instanceclient.Status{"db-1": primaryReport, "db-2": primaryReport}, nil), ""},
	} {
		d := tc.world.decide()
		if d.Status.TargetPrimary != tc.wantTarget {
			t.Errorf("%s: targetPrimary %q, want %q", tc.rule, d.Status.TargetPrimary, tc.wantTarget)
		}
		if tc.wantTarget == "" && (len(d.CreatePods) != 0 || condition(d, v1.ConditionDegraded).Reason != reasonPrimaryUnknown) {
			t.Errorf("%s: without a target nothing is added and the Cluster is degraded: %v %+v", tc.rule,
				createdPodNames(d), condition(d, v1.ConditionDegraded))
		}
	}
}
