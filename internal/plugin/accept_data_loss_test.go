package plugin_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// blockedOnFallback: db-1, the primary, is failing and its failover is blocked because it may hold
// writes it acknowledged alone.
func blockedOnFallback(c *v1.Cluster) {
	since := metav1.NewTime(testNow.Add(-30e9))
	c.Status.PrimaryFailingSince, c.Status.FailingPrimary = &since, "db-1"
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: v1.ConditionDegraded, Status: metav1.ConditionTrue,
		Reason: failover.ReasonAcknowledgedWritesOnPrimaryOnly, Message: "failover from db-1 is blocked"})
}

// TestPromoteAcceptDataLossVerb runs `promote --accept-data-loss` against the real API server,
// one rule a row.
func TestPromoteAcceptDataLossVerb(t *testing.T) {
	cases := []struct {
		rule     string
		existing func(*v1.Cluster)
		instance string
		wantErr  string // "" when the acceptance must be recorded
	}{
		{rule: "a failover blocked on writes acknowledged alone: the acceptance names the failing primary and the replica",
			existing: blockedOnFallback, instance: "db-2"},
		{rule: "no failover blocked for that reason: refused, there is no loss to accept", instance: "db-2",
			wantErr: "is not blocked on writes its primary acknowledged alone"},
		{rule: "a failover blocked for another reason: refused", instance: "db-2",
			existing: func(c *v1.Cluster) {
				blockedOnFallback(c)
				meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: v1.ConditionDegraded, Status: metav1.ConditionTrue,
					Reason: failover.ReasonFailoverBlocked, Message: "no replica is eligible"})
			},
			wantErr: "is not blocked on writes its primary acknowledged alone"},
		{rule: "the failing primary itself is refused", existing: blockedOnFallback, instance: "db-1",
			wantErr: "db-1 is the failing primary"},
		{rule: "a fenced replica is refused", instance: "db-2",
			existing: func(c *v1.Cluster) { blockedOnFallback(c); c.Status.FencedInstances = []string{"db-2"} },
			wantErr:  "db-2 is fenced"},
		{rule: "a diverged replica is refused", instance: "db-3",
			existing: func(c *v1.Cluster) { blockedOnFallback(c); c.Status.DivergedInstances = []string{"db-3"} },
			wantErr:  "db-3 has diverged"},
		{rule: "a name that is not an instance is refused", existing: blockedOnFallback, instance: "db-7",
			wantErr: "db-7 is not an instance of Cluster db"},
		{rule: "an acceptance not acted on yet (its replica could not be promoted) is replaced", instance: "db-3",
			existing: func(c *v1.Cluster) {
				blockedOnFallback(c)
				c.Status.DataLossAccepted = &v1.DataLossAcceptance{FormerPrimary: "db-1", Instance: "db-2",
					FailingSince: *c.Status.PrimaryFailingSince, AcceptedAt: metav1.NewTime(testNow.Add(-time.Minute))}
			}},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			w := newWorld(t)
			before := w.newCluster(t, 3, c.existing)
			out, err := w.run("promote", "db", c.instance, "--accept-data-loss")
			after := w.get(t)
			if after.Status.TargetPrimary != before.Status.TargetPrimary {
				t.Errorf("targetPrimary moved to %q: only the operator names a failover's target", after.Status.TargetPrimary)
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v (output %q), want one containing %q", err, out, c.wantErr)
				}
				if !equalAcceptance(after.Status.DataLossAccepted, before.Status.DataLossAccepted) {
					t.Errorf("a refused acceptance changed status.dataLossAccepted to %+v", after.Status.DataLossAccepted)
				}
				return
			}
			if err != nil || !strings.Contains(out, "accepted the loss of the writes db-1 may hold alone") {
				t.Fatalf("output %q, error %v", out, err)
			}
			a := after.Status.DataLossAccepted
			if a == nil || a.FormerPrimary != "db-1" || a.Instance != c.instance || !a.AcceptedAt.Time.Equal(testNow) || a.PromotedAt != nil ||
				!a.FailingSince.Equal(before.Status.PrimaryFailingSince) {
				t.Errorf("status.dataLossAccepted %+v, want db-1 given up for %s at %v, for the failure since %v, not promoted yet",
					a, c.instance, testNow, before.Status.PrimaryFailingSince)
			}
		})
	}
}

func equalAcceptance(a, b *v1.DataLossAcceptance) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.FormerPrimary == b.FormerPrimary && a.Instance == b.Instance && a.AcceptedAt.Equal(&b.AcceptedAt)
}
