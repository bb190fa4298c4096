package cluster

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

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

// TestDetachedPVCsToDelete: only PVCs detached under storage.whenScaledDown Delete, whose Pod is
// gone, are deleted, and only while the policy is still Delete.
func TestDetachedPVCsToDelete(t *testing.T) {
	w := newWorld(3).primary("db-1", "db-1").instance(1, true).instance(2, true).instance(3, true).
		detached("db-2").detached("db-3")
	for i := range w.o.PVCs {
		if w.o.PVCs[i].Name == "db-3" {
			w.o.PVCs[i].Annotations[specs.DeleteWhenDetachedAnnotation] = "true"
		}
	}
	if got := detachedPVCsToDelete(w.o.Cluster, w.o.PVCs, w.o.Pods); len(got) != 0 {
		t.Errorf("under Retain: %v, want none", got)
	}
	w.o.Cluster.Spec.Storage.WhenScaledDown = v1.PVCDelete
	if got := detachedPVCsToDelete(w.o.Cluster, w.o.PVCs, w.o.Pods); !slices.Equal(got, []string{"db-3"}) {
		t.Errorf("under Delete: %v, want db-3 only (db-2 was detached under Retain)", got)
	}
	w = w.withPodBack("db-3")
	if got := detachedPVCsToDelete(w.o.Cluster, w.o.PVCs, w.o.Pods); len(got) != 0 {
		t.Errorf("with db-3's Pod still there: %v, want none", got)
	}
}
