//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/test/chaos"
)

// Automatic failover by deleting the primary's Pod (seed 003, Verification coverage), under
// the failover checker's write load and dataDurability: required: a replica is promoted (not the
// deleted Pod coming back), writes are accepted through -rw by the new primary, -rw routes to it
// and -ro to the two others, the former primary rejoins as a replica holding every acknowledged
// write, no acknowledged write is lost and no two instances are ever writable together. It runs
// after an operator restart beside a Cluster in another namespace that the operator cannot
// decode: that one is reported, and this one fails over all the same.
func TestAutomaticFailoverByPodDeletion(t *testing.T) {
	badNS := storeUndecodableAndRestartOperator(t)
	rep, cl := runFaults(t, chaos.PodDelete)
	checkUndecodableReported(t, badNS)
	f := rep.Faults[0]
	if f.NewPrimary == "" || f.NewPrimary == f.Primary {
		t.Errorf("after deleting %s's Pod the primary is %q: no replica was promoted", f.Primary, f.NewPrimary)
	}
	if !hasEvent(f.Events, "FailoverCompleted") {
		t.Errorf("no FailoverCompleted Event; Events: %v", f.Events)
	}
	for _, c := range f.Checks {
		if c.Instance == f.Primary && c.Role != "replica" {
			t.Errorf("the former primary %s rejoined as %q, want replica", f.Primary, c.Role)
		}
	}
	if f.Reads.OK == 0 {
		t.Errorf("no read through -ro succeeded while the primary was down (%d tried)", f.Reads.Reads)
	}
	t.Logf("-ro answered %d of %d reads during the failover, longest gap %s", f.Reads.OK, f.Reads.Reads, f.Reads.LongestGap)
	checkRouting(t, cl)
}

// Three planned switchovers (status.targetPrimary set to a replica, as the plugin's promote
// does) under the same load: each target becomes the primary, the old primary follows it,
// nothing is lost and there are never two writers. Among the clients writing through -rw, one
// keeps a pooled session and reconnects at once when it is lost, so it reaches the old primary
// again while -rw still routes there: it must write on the new primary, and the old primary may
// refuse its writes for no longer than chaos.PinnedBudget after the new one took its first.
func TestPlannedSwitchover(t *testing.T) {
	rep, cl := runFaults(t, chaos.Switchover, chaos.Switchover, chaos.Switchover)
	for _, f := range rep.Faults {
		pooled := false
		for _, c := range f.Clients {
			pooled = pooled || c.Kind == chaos.PooledSession
			if c.Writes.Handover == nil || c.PinnedFor > chaos.PinnedBudget {
				t.Errorf("switchover %s -> %s: the %s client's handover %v, refused by the old primary until %s after the new one's first write",
					f.Primary, f.NewPrimary, c.Kind, c.Writes.Handover, c.PinnedFor)
			}
		}
		if !pooled {
			t.Errorf("switchover %s -> %s: no pooled client measured", f.Primary, f.NewPrimary)
		}
	}
	checkRouting(t, cl)
}

// runFaults creates a three-instance Cluster under dataDurability: required, runs the failover
// checker with one fault of each kind given, and fails the test on a load that did not run, a
// lost write, two writers, a failed check, no write after a fault, or a switchover that did not
// hand over to its target. It returns the report and the Cluster as it ended.
func runFaults(t *testing.T, kinds ...chaos.Kind) (*chaos.Report, *mysqlv1.Cluster) {
	t.Helper()
	ns := Namespace(t)
	ctx := context.Background()
	ce := &chaos.Env{Client: env.c, Kubectl: env.kubectl, Kubeconfig: env.kubeconfig, CtrSocket: env.ctrSocket,
		Dialer: &chaos.NetnsDialer{Path: chaos.NodeNetns}, Logf: t.Logf, Operator: chaos.LocalOperator}
	target := chaos.Target{Namespace: ns, Name: "db"}
	if err := ce.CreateCluster(ctx, chaos.ClusterSpec(target, mysqlImage, mysqlv1.DataDurabilityRequired, 0)); err != nil {
		t.Fatal(err)
	}
	rep, err := chaos.Run(ctx, ce, chaos.Config{Target: target, Faults: len(kinds), Kinds: kinds,
		ReadyTimeout: 3 * time.Minute, WriteTimeout: 90 * time.Second, CatchUp: 30 * time.Second, RecoverDiverged: true})
	var out strings.Builder
	rep.Print(&out)
	t.Logf("report:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Acked < 100 {
		t.Errorf("only %d acknowledged writes: the load did not run", rep.Acked)
	}
	if rep.Lost != 0 {
		t.Errorf("%d acknowledged writes lost", rep.Lost)
	}
	if len(rep.DoubleWritable) != 0 {
		t.Errorf("two instances writable at once: %v", rep.DoubleWritable)
	}
	if len(rep.Faults) != len(kinds) {
		t.Fatalf("%d faults injected, want %d", len(rep.Faults), len(kinds))
	}
	for _, f := range rep.Faults {
		if p := f.Problems(); len(p) > 0 {
			t.Errorf("%s on %s: %v", f.Kind, f.Primary, p)
		}
		if f.Writes.RTO == nil {
			t.Errorf("%s on %s: no acknowledged write after it", f.Kind, f.Primary)
		}
		if len(f.Checks) != 3 {
			t.Errorf("%s on %s: %d instances verified, want 3", f.Kind, f.Primary, len(f.Checks))
		}
		if f.Kind == chaos.Switchover && (f.NewPrimary != f.To || f.Writes.Handover == nil) {
			t.Errorf("switchover to %s: primary now %s, handover %v", f.To, f.NewPrimary, f.Writes.Handover)
		}
		// A frozen instance manager fences nothing: the operator must have fenced its mysqld
		// over the administrative interface before promoting anyone.
		if f.Kind == chaos.ManagerFreeze {
			t.Logf("%s on %s: events %q", f.Kind, f.Primary, f.Events)
			if !hasEvent(f.Events, "PrimaryMySQLFenced") {
				t.Errorf("%s on %s: the operator did not fence its mysqld (no PrimaryMySQLFenced Event)", f.Kind, f.Primary)
			}
		}
		// A crash may leave a former primary with a commit no replica acknowledged, which the
		// checker recovers; a planned switchover never leaves anything diverged.
		if f.Kind == chaos.Switchover && len(f.Diverged) > 0 {
			t.Errorf("switchover to %s left instances diverged: %+v", f.To, f.Diverged)
		}
	}
	cl, err := ce.Cluster(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	return rep, cl
}

// checkRouting waits for -rw to route to the Cluster's current primary only and -ro to the two
// other instances.
func checkRouting(t *testing.T, cl *mysqlv1.Cluster) {
	t.Helper()
	primary := cl.Status.CurrentPrimary
	WaitFor(t, time.Minute, "-rw on "+primary+" and -ro on the two others", func() (bool, error) {
		rw, ro := servicePods(t, cl.Namespace, cl.Name+"-rw"), servicePods(t, cl.Namespace, cl.Name+"-ro")
		ok := len(rw) == 1 && rw[0] == primary && len(ro) == 2 && !slices.Contains(ro, primary)
		return ok, fmt.Errorf("-rw routes to %v, -ro to %v, the primary is %s", rw, ro, primary)
	})
}

func hasEvent(events []string, reason string) bool {
	for _, e := range events {
		if strings.Contains(e, reason) {
			return true
		}
	}
	return false
}
