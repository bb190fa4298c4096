package cluster

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

func TestVersionRefusals(t *testing.T) {
	const refusal = "refusing to start mysqld: the data directory was last used by MySQL 9.7.0; this image runs 8.4.3: ..."
	pod := func(name string, st corev1.ContainerStatus) *corev1.Pod {
		st.Name = specs.MySQLContainerName
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{st}}}
	}
	waiting := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	ended := func(msg string) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: msg}}
	}
	for _, tc := range []struct {
		rule string
		pod  *corev1.Pod
		want []string
	}{
		{"a container in back-off after a refusal is reported with the manager's message",
			pod("db-2", corev1.ContainerStatus{State: waiting, LastTerminationState: ended(refusal)}), []string{"db-2: " + refusal}},
		{"a container that just ended refusing is reported", pod("db-2", corev1.ContainerStatus{State: ended(refusal)}), []string{"db-2: " + refusal}},
		{"a container that ended for another reason is not", pod("db-2", corev1.ContainerStatus{State: waiting, LastTerminationState: ended("OOMKilled")}), nil},
		{"a running ready container is not, whatever it ended with before",
			pod("db-2", corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, Ready: true,
				LastTerminationState: ended(refusal)}), nil},
		{"a Pod being deleted is not", func() *corev1.Pod {
			p := pod("db-2", corev1.ContainerStatus{State: waiting, LastTerminationState: ended(refusal)})
			p.DeletionTimestamp = &metav1.Time{}
			return p
		}(), nil},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got := versionRefusals([]observedInstance{{Name: "db-1"}, {Name: tc.pod.Name, Pod: tc.pod}})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNotLarger(t *testing.T) {
	pod := func(cpu, mem string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)},
		}}}}}
	}
	for _, tc := range []struct {
		rule     string
		new, old *corev1.Pod
		want     bool
	}{
		{"the same resources fit where the old Pod did", pod("100m", "1Gi"), pod("100m", "1Gi"), true},
		{"less fits", pod("50m", "512Mi"), pod("100m", "1Gi"), true},
		{"a larger request does not", pod("200m", "1Gi"), pod("100m", "1Gi"), false},
		{"a larger limit does not", pod("100m", "2Gi"), pod("100m", "1Gi"), false},
		{"a resource the old Pod did not ask for does not", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}}}}},
			pod("100m", "1Gi"), false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := notLarger(tc.new, tc.old); got != tc.want {
				t.Errorf("notLarger = %t, want %t", got, tc.want)
			}
		})
	}
}
