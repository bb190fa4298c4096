package cluster

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

func cpuRequest(cpu string) v1.ResourceRequirements {
	return v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
}

// sized: a settled three-instance Cluster (db-1 primary) whose Pods were built asking 100m of CPU,
// the Cluster asking cpu now; resized names the Pods already given cpu.
func sized(cpu string, resized ...string) *world {
	w := newWorld(3).spec(func(s *v1.ClusterSpec) { s.Resources = cpuRequest("100m") }).
		primary("db-1", "db-1").instance(1, true).instance(2, true).instance(3, true).labelled()
	w.reports(map[string]*instanceclient.Status{
		"db-1": primaryReport(uuidA + ":1-10"),
		"db-2": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
		"db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
	}, nil)
	w.o.Cluster.Spec.Resources = cpuRequest(cpu)
	for i := range w.o.Pods {
		w.o.Pods[i].UID = types.UID("uid-" + w.o.Pods[i].Name)
		if slices.Contains(resized, w.o.Pods[i].Name) {
			mysqlContainer(&w.o.Pods[i]).Resources = cpuRequest(cpu).Container()
			w.o.Pods[i].Annotations[specs.ResourcesAnnotation] = specs.ResizableKey(cpuRequest(cpu).Container())
		}
	}
	return w
}

// podCondition adds a condition to name's Pod.
func (w *world) podCondition(name string, cond corev1.PodCondition) *world {
	for i := range w.o.Pods {
		if w.o.Pods[i].Name == name {
			w.o.Pods[i].Status.Conditions = append(w.o.Pods[i].Status.Conditions, cond)
		}
	}
	return w
}

func (w *world) podAnnotation(name, key, value string) *world {
	for i := range w.o.Pods {
		if w.o.Pods[i].Name == name {
			w.o.Pods[i].Annotations[key] = value
		}
	}
	return w
}

func TestPlanResize(t *testing.T) {
	key := specs.ResizableKey(cpuRequest("200m").Container())
	inProgress := corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue}
	deferred := corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred,
		Message: "Node didn't have enough capacity"}
	infeasible := corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible,
		Message: "Node didn't have enough capacity: cpu, requested: 200000, capacity: 2000"}
	for _, tc := range []struct {
		rule          string
		world         *world
		wantResize    []string
		wantDelete    []string
		wantCondition string
		wantEvent     string
		wantTarget    string // status.targetPrimary after the decision; "" means unchanged (db-1)
	}{
		{"resources as asked: nothing to do", sized("100m"), nil, nil, reasonConverged, "", ""},
		{"a new CPU request resizes the highest serial replica first, in place", sized("200m"), []string{"db-3"}, nil,
			reasonResizing, "InstanceResizing", ""},
		{"then the next replica", sized("200m", "db-3"), []string{"db-2"}, nil, reasonResizing, "InstanceResizing", ""},
		{"the primary last, in place: no switchover", sized("200m", "db-3", "db-2"), []string{"db-1"}, nil, reasonResizing, "InstanceResizing", ""},
		{"every instance resized: converged", sized("200m", "db-3", "db-2", "db-1"), nil, nil, reasonConverged, "", ""},
		{"the next waits while the kubelet resizes one", sized("200m", "db-3").podCondition("db-3", inProgress), nil, nil, reasonResizing, "", ""},
		{"the next waits while the kubelet defers a resize", sized("200m", "db-3").podCondition("db-3", deferred), nil, nil, reasonResizing, "", ""},
		{"an infeasible resize waits with a Warning and replaces nothing", sized("200m", "db-3").podCondition("db-3", infeasible), nil, nil,
			reasonResizing, "ResizeInfeasible", ""},
		{"a replica whose resize the API server refused is replaced", sized("200m").podAnnotation("db-3", resizeRefusedAnnotation,
			key+"|Forbidden"), nil, []string{"db-3"}, reasonRollingUpdate, "InstanceUpdating", ""},
		{"a resize a ResourceQuota refuses waits: a new Pod would be refused too", sized("200m").podAnnotation("db-3", resizeRefusedAnnotation,
			key+`|pods "db-3" is forbidden: exceeded quota: q, requested: requests.cpu=200m`).podAnnotation("db-3", resizeRefusedAtAnnotation,
			testNow.Add(-time.Minute).Format(time.RFC3339)), nil, nil, reasonResizing, "", ""},
		{"a resize a ResourceQuota refused is asked again after 5 minutes", sized("200m").podAnnotation("db-3", resizeRefusedAnnotation,
			key+`|pods "db-3" is forbidden: exceeded quota: q, requested: requests.cpu=200m`).podAnnotation("db-3", resizeRefusedAtAnnotation,
			testNow.Add(-resizeQuotaRetry).Format(time.RFC3339)), []string{"db-3"}, nil, reasonResizing, "", ""},
		{"a refusal the resize then got past (a quota raised) is over: converged", sized("200m", "db-3", "db-2", "db-1").podAnnotation("db-3",
			resizeRefusedAnnotation, key+`|exceeded quota`).podAnnotation("db-3", resizeRefusedAtAnnotation,
			testNow.Add(-time.Hour).Format(time.RFC3339)), nil, nil, reasonConverged, "", ""},
		{"a refusal of other resources is not this resize's: asked again", sized("200m").podAnnotation("db-3", resizeRefusedAnnotation,
			"requests cpu=300m; limits none|Forbidden"), []string{"db-3"}, nil, reasonResizing, "InstanceResizing", ""},
		{"a primary whose resize was refused is switched over to a resized replica", sized("200m", "db-3", "db-2").podAnnotation("db-1",
			resizeRefusedAnnotation, key+"|Forbidden"), nil, nil, reasonPrimaryUpdateSwitchover, "PrimaryUpdateSwitchover", "db-2"},
		{"resources the API server stored otherwise than asked (a LimitRange's defaults) are not asked again", func() *world {
			w := sized("200m", "db-3", "db-2", "db-1")
			for i := range w.o.Pods {
				mysqlContainer(&w.o.Pods[i]).Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}
			}
			return w
		}(), nil, nil, reasonConverged, "", ""},
		{"a change of QoS class rolls: no resize", func() *world {
			w := sized("100m")
			w.o.Cluster.Spec.Resources = v1.ResourceRequirements{}
			return w
		}(), nil, []string{"db-3"}, reasonRollingUpdate, "InstanceUpdating", ""},
		{"nothing while an instance is not ready", func() *world {
			w := sized("200m")
			w.o.Pods[1].Status.Conditions = nil
			return w
		}(), nil, nil, reasonInstancesNotReady, "", ""},
	} {
		d := tc.world.decide()
		var resized []string
		for _, r := range d.ResizePods {
			resized = append(resized, r.Pod)
		}
		target := tc.wantTarget
		if target == "" {
			target = "db-1"
		}
		var events []string
		for _, evs := range d.Events {
			for _, e := range evs {
				events = append(events, e.Kind.Reason)
			}
		}
		cond := condition(d, v1.ConditionProgressing)
		if !slices.Equal(resized, tc.wantResize) || !slices.Equal(d.DeletePods, tc.wantDelete) || cond.Reason != tc.wantCondition ||
			d.Status.TargetPrimary != target || (tc.wantEvent != "" && !slices.Contains(events, tc.wantEvent)) ||
			(tc.wantEvent == "" && slices.ContainsFunc(events, func(r string) bool { return strings.HasPrefix(r, "Resize") || r == "InstanceResizing" })) {
			t.Errorf("%s: resize %v, delete %v, target %q, events %v, Progressing %+v", tc.rule, resized, d.DeletePods,
				d.Status.TargetPrimary, events, cond)
		}
	}
}

func TestResizePatch(t *testing.T) {
	cur := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"),
		corev1.ResourceMemory: resource.MustParse("1Gi")}, Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	want := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}
	got, err := resizePatch(cur, want, "")
	if err != nil {
		t.Fatal(err)
	}
	const expect = `{"spec":{"containers":[{"name":"mysql","resources":{"limits":{"memory":null},"requests":{"cpu":"200m","memory":null}}}]}}`
	if string(got) != expect {
		t.Fatalf("patch %s, want %s", got, expect)
	}
	// The memory the Pod has was not asked by the operator (a LimitRange's default): left alone.
	got, err = resizePatch(cur, want, "requests cpu=100m; limits none")
	if err != nil {
		t.Fatal(err)
	}
	const keep = `{"spec":{"containers":[{"name":"mysql","resources":{"limits":{},"requests":{"cpu":"200m"}}}]}}`
	if string(got) != keep {
		t.Fatalf("patch %s, want %s", got, keep)
	}
	if !strings.Contains(specs.ResizableKey(want), "requests cpu=200m; limits none") {
		t.Fatalf("ResizableKey %q", specs.ResizableKey(want))
	}
}
