package instancemanager

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// TestFailoverBlockedByDivergence runs the Cluster reconciler against three instance managers on
// real mysqld, as TestOperatorFailover does, for seed 003's rule "if the GTID sets are divergent
// or no safe candidate exists, failover is blocked instead of risking data loss".
func TestFailoverBlockedByDivergence(t *testing.T) {
	w := startOperatorWorld(t)
	steps := []step[*operatorWorld]{
		{"the operator creates the Pods and the Cluster becomes Ready", testOperatorComeUp},
		{"replicas whose histories diverge after the primary stopped block the failover", testDivergenceBlocksFailover},
	}
	runSteps(t, w, steps, w.explain)
}

// testDivergenceBlocksFailover: the primary stops; while the operator waits out failoverDelay,
// each replica takes a write of its own (a human writing to a replica), which neither role
// reconciler can see as errant with the primary gone. Each replica then holds a transaction the
// other never had: promoting either would drop the other's. The operator promotes neither: the
// Cluster says FailoverBlocked (a Warning Event naming the divergence, Degraded), targetPrimary
// stays on the stopped primary and both replicas stay read-only.
func testDivergenceBlocksFailover(t *testing.T, o *operatorWorld) {
	stopping := time.Now()
	o.stopNode(t, "db-1")
	for _, r := range []string{"db-2", "db-3"} {
		o.nodes[r].errantWrite(t)
	}
	// The failover must not have started yet, or the writes came too late to mean anything.
	if ev := o.events(t); ev[failover.EventFailoverStarted] != "" || ev[failover.EventFailoverPromoting] != "" {
		t.Fatalf("the failover started before the errant writes (%s after the primary's SIGTERM): %v", time.Since(stopping), ev)
	}
	eventually(t, (failoverDelay+60)*time.Second, "a FailoverBlocked Event about diverging histories", func() bool {
		return strings.Contains(o.events(t)[failover.EventFailoverBlocked], "diverge")
	})
	t.Logf("failover blocked %s after the primary stopped: %s", time.Since(stopping).Round(time.Second),
		o.events(t)[failover.EventFailoverBlocked])
	// Blocked for good: watch a while that nothing is promoted.
	until := time.Now().Add(10 * time.Second)
	for time.Now().Before(until) {
		c := o.cluster(t)
		if c.Status.TargetPrimary != "db-1" {
			t.Fatalf("targetPrimary moved to %q although the replicas' histories diverge", c.Status.TargetPrimary)
		}
		if d := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionDegraded); d == nil || d.Status != "True" {
			t.Errorf("Degraded = %+v while the failover is blocked", d)
		}
		for _, r := range []string{"db-2", "db-3"} {
			if st := o.nodes[r].status(t); st != nil && st.Writable() {
				// The errant write turned it writable for a moment; its role reconciler turns
				// it read-only again at once.
				eventually(t, 5*time.Second, r+" read-only again", func() bool {
					st := o.nodes[r].status(t)
					return st != nil && !st.Writable()
				})
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	if ev := o.events(t)[failover.EventFailoverPromoting]; ev != "" {
		t.Errorf("FailoverPromoting Event although blocked: %s", ev)
	}
}
