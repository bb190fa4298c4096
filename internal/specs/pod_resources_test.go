package specs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPodQOSClass(t *testing.T) {
	q := resource.MustParse
	res := func(req, lim corev1.ResourceList) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: req, Limits: lim}
	}
	both := corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("1Gi")}
	for _, tc := range []struct {
		rule       string
		init, main corev1.ResourceRequirements
		want       corev1.PodQOSClass
	}{
		{"no CPU or memory anywhere is BestEffort", res(nil, nil), res(nil, nil), corev1.PodQOSBestEffort},
		{"a request is Burstable", res(nil, nil), res(corev1.ResourceList{corev1.ResourceCPU: q("1")}, nil), corev1.PodQOSBurstable},
		{"limits equal to requests in every container are Guaranteed", res(both, both), res(both, both), corev1.PodQOSGuaranteed},
		{"limits alone default the requests: Guaranteed", res(nil, both), res(nil, both), corev1.PodQOSGuaranteed},
		{"an init container without limits makes it Burstable", res(nil, nil), res(both, both), corev1.PodQOSBurstable},
		{"a request below its limit is Burstable", res(nil, both), res(corev1.ResourceList{corev1.ResourceCPU: q("500m"),
			corev1.ResourceMemory: q("1Gi")}, both), corev1.PodQOSBurstable},
		{"other resources do not count", res(nil, nil), res(corev1.ResourceList{corev1.ResourceEphemeralStorage: q("1Gi")}, nil),
			corev1.PodQOSBestEffort},
	} {
		spec := &corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i", Resources: tc.init}},
			Containers: []corev1.Container{{Name: "m", Resources: tc.main}}}
		if got := PodQOSClass(spec); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.rule, got, tc.want)
		}
	}
}

func TestSameResizable(t *testing.T) {
	q := resource.MustParse
	a := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1000m"), corev1.ResourceEphemeralStorage: q("1Gi")}}
	b := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1")}}
	if !SameResizable(a, b) {
		t.Error("1000m and 1 CPU differ, or ephemeral storage counted")
	}
	b.Limits = corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}
	if SameResizable(a, b) {
		t.Error("a memory limit added is not a difference")
	}
	if got := ResizableOf(a); len(got.Requests) != 1 || got.Limits != nil {
		t.Errorf("ResizableOf kept %+v", got)
	}
	if got := ResizableOf(b); got.Requests.Memory().Cmp(q("1Gi")) != 0 {
		t.Errorf("ResizableOf did not default the memory request to its limit, as the API server does: %+v", got)
	}
}

func TestKeyAsks(t *testing.T) {
	key := "requests cpu=1, memory=1Gi; limits memory=2Gi"
	for _, tc := range []struct {
		section string
		name    corev1.ResourceName
		want    bool
	}{
		{"requests", corev1.ResourceCPU, true},
		{"requests", corev1.ResourceMemory, true},
		{"limits", corev1.ResourceMemory, true},
		{"limits", corev1.ResourceCPU, false},
	} {
		if got := KeyAsks(key, tc.section, tc.name); got != tc.want {
			t.Errorf("KeyAsks(%q, %s, %s) = %v", key, tc.section, tc.name, got)
		}
	}
	if KeyAsks("requests none; limits none", "requests", corev1.ResourceCPU) {
		t.Error("an empty key asks for CPU")
	}
}
