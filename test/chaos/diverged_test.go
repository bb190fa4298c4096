package chaos

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestSettledButDiverged(t *testing.T) {
	pod := func(name string, ready bool) corev1.Pod {
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}}
	}
	cluster := func(current, target string, diverged ...string) *mysqlv1.Cluster {
		c := &mysqlv1.Cluster{}
		c.Status.CurrentPrimary, c.Status.TargetPrimary, c.Status.DivergedInstances = current, target, diverged
		return c
	}
	for _, tc := range []struct {
		rule string
		c    *mysqlv1.Cluster
		pods []corev1.Pod
		want []string
	}{
		{"a diverged instance with every other Pod ready waits for a human", cluster("db-2", "db-2", "db-1"),
			[]corev1.Pod{pod("db-1", false), pod("db-2", true), pod("db-3", true)}, []string{"db-1"}},
		{"nothing diverged", cluster("db-2", "db-2"), []corev1.Pod{pod("db-1", true), pod("db-2", true)}, nil},
		{"a failover still running is not settled", cluster("db-2", "db-3", "db-1"),
			[]corev1.Pod{pod("db-1", false), pod("db-2", true), pod("db-3", true)}, nil},
		{"another Pod not ready yet is not settled", cluster("db-2", "db-2", "db-1"),
			[]corev1.Pod{pod("db-1", false), pod("db-2", true), pod("db-3", false)}, nil},
	} {
		if got := settledButDiverged(tc.c, tc.pods); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.rule, got, tc.want)
		}
	}
}

func TestVerdicts(t *testing.T) {
	r := &Report{Summary: []KindSummary{
		{Kind: PodDelete, RTO: Quantile([]time.Duration{3 * time.Second, 6 * time.Second})},
		{Kind: Switchover, RTO: Quantile([]time.Duration{time.Second}), Handover: Quantile([]time.Duration{1500 * time.Millisecond})},
	}}
	v := r.Verdicts()
	if len(v) != 2 {
		t.Fatalf("%d verdicts, want one per measured objective: %+v", len(v), v)
	}
	if v[0].Kind != PodDelete || v[0].Met || v[0].Q.P99 != 6*time.Second {
		t.Errorf("pod-delete with a 6 s p99 misses its 5 s target: %+v", v[0])
	}
	if v[1].Kind != Switchover || !v[1].Met || v[1].Q.P99 != 1500*time.Millisecond {
		t.Errorf("a switchover is measured by its handover, 1.5 s within 2 s: %+v", v[1])
	}
	r.Faults = []FaultResult{{Reads: ReadAvailability{Reads: 10, OK: 9, LongestGap: 300 * time.Millisecond}}}
	if longest, failed, reads, met := r.ROVerdict(); !met || failed != 1 || reads != 10 || longest != 300*time.Millisecond {
		t.Errorf("-ro with a 300 ms gap: %v %d %d %v", longest, failed, reads, met)
	}
	r.Faults[0].Reads.LongestGap = 2 * time.Second
	if _, _, _, met := r.ROVerdict(); met {
		t.Error("-ro empty for 2 s misses its target")
	}
}
