package cluster

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// TestPlanTransitions has one row per rule of what a reconcile's writes count.
func TestPlanTransitions(t *testing.T) {
	now := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }
	degraded := func(reason string) []metav1.Condition {
		return []metav1.Condition{{Type: v1.ConditionDegraded, Status: metav1.ConditionTrue, Reason: reason}}
	}
	failing := v1.ClusterStatus{CurrentPrimary: "db-3", TargetPrimary: "db-3", FailingPrimary: "db-1",
		PrimaryFailingSince: at(-40 * time.Second), CurrentPrimaryTimestamp: at(-10 * time.Second)}
	cleared := failing
	cleared.PrimaryFailingSince, cleared.FailingPrimary = nil, ""
	recovering := failing
	recovering.CurrentPrimary, recovering.TargetPrimary = "db-1", "db-1"
	recovered := recovering
	recovered.PrimaryFailingSince, recovered.FailingPrimary = nil, ""
	skewed := failing
	skewed.CurrentPrimaryTimestamp = at(-50 * time.Second)
	switched := v1.ClusterStatus{CurrentPrimary: "db-2", TargetPrimary: "db-2", TargetPrimaryTimestamp: at(-7 * time.Second),
		CurrentPrimaryTimestamp: at(-2 * time.Second)}
	withConds := func(st v1.ClusterStatus, conds []metav1.Condition) v1.ClusterStatus {
		st.Conditions = conds
		return st
	}
	for _, tc := range []struct {
		rule         string
		old, next    v1.ClusterStatus
		switchedOver bool
		want         []transition
	}{
		{"a failure record cleared after another instance was promoted is a failover, from the record to the promotion",
			failing, cleared, false, []transition{{step: stepStatus, kind: kindFailover, duration: 30 * time.Second}}},
		{"a failure record cleared because the primary recovered is no failover", recovering, recovered, false, nil},
		{"a failure record kept is no failover yet", failing, failing, false, nil},
		{"a promotion stamped before the failure record (the new primary's clock behind) lasts 0",
			skewed, func() v1.ClusterStatus { s := skewed; s.PrimaryFailingSince = nil; return s }(), false,
			[]transition{{step: stepStatus, kind: kindFailover}}},
		{"a switchover seen completed counts with the label move, from the request to the promotion",
			switched, switched, true, []transition{{step: stepDemotion, kind: kindSwitchover, duration: 5 * time.Second}}},
		{"the Degraded condition taking a blocked reason starts an episode",
			withConds(recovering, degraded(failover.ReasonPrimaryFailing)), withConds(recovering, degraded(failover.ReasonFailoverBlocked)), false,
			[]transition{{step: stepStatus, reason: failover.ReasonFailoverBlocked}}},
		{"the blocked reason kept is the same episode",
			withConds(recovering, degraded(failover.ReasonFailoverBlocked)), withConds(recovering, degraded(failover.ReasonFailoverBlocked)), false, nil},
		{"another blocked reason is a new episode",
			withConds(recovering, degraded(failover.ReasonFailoverBlocked)), withConds(recovering, degraded(failover.ReasonAcknowledgedWritesOnPrimaryOnly)), false,
			[]transition{{step: stepStatus, reason: failover.ReasonAcknowledgedWritesOnPrimaryOnly}}},
		{"a Degraded condition for another reason is no episode",
			recovering, withConds(recovering, degraded(failover.ReasonPrimaryFailing)), false, nil},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			o := Observation{Now: now, Cluster: &v1.Cluster{Status: tc.old}}
			got := planTransitions(o, Decision{Status: tc.next, switchedOver: tc.switchedOver})
			if len(got) != len(tc.want) {
				t.Fatalf("transitions %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("transition %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
