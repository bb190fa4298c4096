package instancemanager

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// TestSwitchoverAbort runs the Cluster reconciler against three instance managers on real mysqld
// for seed 003's switchover rules that end in an abort: a target that fails validation, and a
// target that cannot catch up within maxSwitchoverDelay. Either way targetPrimary goes back to the
// old primary, which keeps (or resumes) its writes under its Lease, and the Cluster says
// SwitchoverBlocked.
func TestSwitchoverAbort(t *testing.T) {
	w := startOperatorWorld(t)
	steps := []step[*operatorWorld]{
		{"the operator creates the Pods and the Cluster becomes Ready", testOperatorComeUp},
		{"a switchover to a fenced replica is refused; the primary keeps its writes", testSwitchoverToFencedRefused},
		{"a target that cannot catch up within maxSwitchoverDelay is aborted; the primary keeps its writes", testSwitchoverCatchUpTimeout},
	}
	runSteps(t, w, steps, w.explain)
}

// expectAborted waits for the switchover to target to be aborted with a SwitchoverBlocked Event
// whose message contains why, then checks that db-1 is the primary again and takes a write.
func expectAborted(t *testing.T, o *operatorWorld, target, why string, id int) {
	t.Helper()
	eventually(t, 60*time.Second, "the switchover to "+target+" aborted, targetPrimary back on db-1", func() bool {
		c := o.cluster(t)
		return c.Status.TargetPrimary == "db-1" && c.Status.CurrentPrimary == "db-1" &&
			strings.Contains(o.events(t)[failover.EventSwitchoverBlocked], why)
	})
	t.Logf("SwitchoverBlocked: %s", o.events(t)[failover.EventSwitchoverBlocked])
	eventually(t, 30*time.Second, "db-1 accepting writes again", func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		_, err := o.nodes["db-1"].db.ExecContext(ctx, "INSERT INTO app.t VALUES (?)", id)
		return err == nil
	})
	if st := o.nodes[target].status(t); st == nil || st.Writable() {
		t.Errorf("%s after the abort: %+v; want read-only", target, st)
	}
	if c := meta.FindStatusCondition(o.cluster(t).Status.Conditions, v1alpha1.ConditionDegraded); c == nil {
		t.Error("no Degraded condition")
	}
}

// testSwitchoverToFencedRefused: validation refuses a fenced target before the old primary is
// demoted.
func testSwitchoverToFencedRefused(t *testing.T, o *operatorWorld) {
	o.setFence(t, `["db-2"]`)
	eventually(t, 30*time.Second, "db-2 fenced", func() bool {
		return len(o.cluster(t).Status.FencedInstances) == 1
	})
	o.setTarget(t, "db-2")
	expectAborted(t, o, "db-2", "fenced", 10)
	o.setFence(t, "")
	o.waitRoles(t, 60*time.Second, "db-1", "db-2", "db-3")
}

// testSwitchoverCatchUpTimeout: db-3's applier is held behind a read lock on the table, taken on db-3 itself
// while db-1 keeps writing, so db-3 cannot hold db-1's set; with maxSwitchoverDelay 5 s the
// switchover to db-3 is aborted and db-1 resumes its writes. Once the lock is released, db-3
// catches up and follows db-1 again.
func testSwitchoverCatchUpTimeout(t *testing.T, o *operatorWorld) {
	o.updateSpec(t, func(s *v1alpha1.ClusterSpec) { s.MaxSwitchoverDelay = 5 })
	lagging := o.nodes["db-3"]
	conn, err := lagging.db.Conn(t.Context())
	must(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(t.Context(), "LOCK TABLES app.t READ")
	must(t, err)
	for id := 20; id < 25; id++ {
		o.nodes["db-1"].exec(t, fmt.Sprintf("INSERT INTO app.t VALUES (%d)", id))
	}
	begin := time.Now()
	o.setTarget(t, "db-3")
	expectAborted(t, o, "db-3", "maxSwitchoverDelay", 30)
	t.Logf("aborted %s after the request", time.Since(begin).Round(100*time.Millisecond))
	_, err = conn.ExecContext(t.Context(), "UNLOCK TABLES")
	must(t, err)
	o.waitRoles(t, 60*time.Second, "db-1", "db-2", "db-3")
	if missing := missingRows(t, lagging, []int{20, 21, 22, 23, 24, 30}); len(missing) > 0 {
		t.Errorf("db-3 lacks %v after the lock was released", missing)
	}
}
