//go:build e2e

package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/test/chaos"
)

// An unsupervised rolling update with the default primaryUpdateMethod (switchover), under the
// failover checker's write load and dataDurability: required: a change of the Pods' annotations
// (spec.podMetadata) replaces both replicas, then the operator switches over to an updated replica by itself (no promote), then
// replaces the old primary. No acknowledged write is lost, there are never two writers, and the
// longest write gap is the switchover's.
func TestRollingUpdateMovesThePrimary(t *testing.T) {
	rep, cl := runFaults(t, chaos.RollingUpdate)
	f := rep.Faults[0]
	if f.NewPrimary == "" || f.NewPrimary == f.Primary {
		t.Errorf("after the update the primary is %q, was %q: the operator did not switch over", f.NewPrimary, f.Primary)
	}
	wantEvents(t, f, true, "PrimaryUpdateSwitchover", "SwitchoverCompleted", "InstanceUpdating")
	wantEvents(t, f, false, "FailoverStarted")
	logRollout(t, f)
	checkRouting(t, cl)
}

// The same update with primaryUpdateMethod restart: the primary's Pod is restarted in place once
// the replicas run the new spec, and no failover starts while it is down.
func TestRollingUpdateRestartsThePrimaryInPlace(t *testing.T) {
	rep, cl := runFaults(t, chaos.RollingUpdateRestart)
	f := rep.Faults[0]
	if f.NewPrimary != f.Primary {
		t.Errorf("after a restart-method update the primary is %q, was %q", f.NewPrimary, f.Primary)
	}
	wantEvents(t, f, true, "PrimaryUpdateRestart")
	wantEvents(t, f, false, "FailoverStarted", "PrimaryFailing", "SwitchoverStarted")
	logRollout(t, f)
	checkRouting(t, cl)
}

// A change of CPU and memory requests under the same load (the QoS class kept): every instance is
// resized in place through the Pod's resize subresource, replicas first and the primary last. No
// Pod is replaced, no container restarts, mysqld neither stops nor starts, the primary stays, and
// writes go on without a gap over the switchover budget.
func TestResourcesResizedInPlaceUnderWrites(t *testing.T) {
	rep, cl := runFaults(t, chaos.Resize)
	f := rep.Faults[0]
	if f.NewPrimary != f.Primary {
		t.Errorf("the resize moved the primary from %s to %s", f.Primary, f.NewPrimary)
	}
	wantEvents(t, f, true, "InstanceResizing")
	wantEvents(t, f, false, "FailoverStarted", "SwitchoverStarted", "PrimaryUpdateSwitchover", "InstanceUpdating", "ResizeRefused",
		"ResizeInfeasible")
	if f.Writes.Gap != nil && *f.Writes.Gap > 2*time.Second {
		t.Errorf("longest write gap %s during the resize, over the 2 s switchover budget", f.Writes.Gap)
	}
	logRollout(t, f)
	checkRouting(t, cl)
}

// An operator upgrade under the same load: the operator's Deployment moves to another operator
// image (the same sources built as version "next"). The new operator updates every instance
// manager in place: no Pod is replaced, no container restarts, mysqld keeps running (each log
// shows the new program taking it back), the primary stays, and writes go on without a gap over
// the switchover budget. The operator is moved back at the end.
func TestOperatorUpgradeUnderWrites(t *testing.T) {
	if out, err := exec.Command("bash", filepath.Join(env.root, "hack/localcluster.sh"), "next-operator").CombinedOutput(); err != nil {
		t.Fatalf("building the next operator image: %v\n%s", err, out)
	}
	restore := &chaos.Env{Client: env.c, Operator: chaos.LocalOperator}
	t.Cleanup(func() {
		if err := restore.SetOperatorImage(context.Background(), operatorImage); err != nil {
			t.Errorf("moving the operator back to %s: %v", operatorImage, err)
		}
	})
	rep, cl := runFaults(t, chaos.OperatorUpgrade)
	f := rep.Faults[0]
	if f.NewPrimary != f.Primary {
		t.Errorf("the operator upgrade moved the primary from %s to %s", f.Primary, f.NewPrimary)
	}
	wantEvents(t, f, true, "InstanceManagerUpdating", "InstanceManagerUpdated")
	wantEvents(t, f, false, "FailoverStarted", "SwitchoverStarted", "PrimaryUpdateSwitchover", "InstanceUpdating", "InstanceManagerUpdateFailed")
	if f.Writes.Gap != nil && *f.Writes.Gap > 2*time.Second {
		t.Errorf("longest write gap %s during the in-place update, over the 2 s switchover budget", f.Writes.Gap)
	}
	logRollout(t, f)
	checkRouting(t, cl)
}

func logRollout(t *testing.T, f chaos.FaultResult) {
	t.Helper()
	gap := "none"
	if f.Writes.Gap != nil {
		gap = f.Writes.Gap.String()
	}
	t.Logf("%s (%s): longest write gap %s", f.Kind, f.Detail, gap)
	for _, c := range f.Clients {
		t.Logf("client %s: handover %v", c.Kind, c.Writes.Handover)
	}
	for _, s := range f.SlowAttempts {
		t.Logf("slow write attempt: %+v", s)
	}
	for _, e := range f.Events {
		t.Logf("event: %s", e)
	}
	for _, s := range f.Shutdowns {
		if s.Seen && s.Total > 5*time.Second {
			t.Logf("the shutdown of %s took %s; mysqld's log meanwhile:\n%s", s.Pod, s.Total, strings.Join(s.Lines, "\n"))
		}
	}
}

// A dynamic parameter (max_connections) changed under the same load: every instance runs the new
// value without any Pod being replaced or the primary moving.
func TestDynamicParameterChangeTakesEffectInPlace(t *testing.T) {
	rep, cl := runFaults(t, chaos.ParameterDynamic)
	f := rep.Faults[0]
	if f.NewPrimary != f.Primary {
		t.Errorf("the primary moved from %s to %s for a dynamic parameter", f.Primary, f.NewPrimary)
	}
	wantEvents(t, f, false, "InstanceRestarting", "InstanceUpdating", "SwitchoverStarted", "InstanceRecreated")
	logRollout(t, f)
	checkRouting(t, cl)
}

// A parameter mysqld takes only at its start (table_open_cache_instances): the instances report it
// pending, the operator restarts the replicas, switches over, and restarts the old primary.
func TestRestartParameterRollsTheCluster(t *testing.T) {
	rep, cl := runFaults(t, chaos.ParameterRestart)
	f := rep.Faults[0]
	if f.NewPrimary == "" || f.NewPrimary == f.Primary {
		t.Errorf("after a restart-requiring parameter the primary is %q, was %q: no switchover", f.NewPrimary, f.Primary)
	}
	wantEvents(t, f, true, "InstanceRestarting", "PrimaryUpdateSwitchover", "SwitchoverCompleted")
	logRollout(t, f)
	checkRouting(t, cl)
}

// Scaling 3 -> 5 -> 2 -> 3 under the load: new replicas clone and join, the highest-numbered
// replicas go (an acknowledging one only once another acknowledges in its place), the primary
// stays, and no acknowledged write is lost.
func TestScaleUpAndDownUnderWrites(t *testing.T) {
	rep, cl := runFaults(t, chaos.Scale)
	f := rep.Faults[0]
	if f.NewPrimary != f.Primary {
		t.Errorf("scaling moved the primary from %s to %s", f.Primary, f.NewPrimary)
	}
	wantEvents(t, f, true, "InstanceCreated", "InstanceRemoved")
	logRollout(t, f)
	checkRouting(t, cl)
}

// wantEvents fails t unless each of reasons is among the fault's Events (present) or none is.
func wantEvents(t *testing.T, f chaos.FaultResult, present bool, reasons ...string) {
	t.Helper()
	for _, reason := range reasons {
		if hasEvent(f.Events, reason) != present {
			t.Errorf("%s %s: Event %s present %v, want %v; Events: %v", f.Kind, f.Detail, reason, !present, present, f.Events)
		}
	}
}
