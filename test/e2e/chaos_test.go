//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/test/chaos"
)

// The short run of the failover checker (test/chaos): three faults of different kinds on the
// primary of a Cluster under dataDurability: required, while a writer inserts through -rw and a
// poller reads every instance's read_only every 100 ms. No acknowledged write may be lost, no two
// instances may ever be seen writable together, every replica must hold every acknowledged write
// after each fault, and writes must flow again after each. The faults are those the instances
// recover from without automatic failover: mysqld killed, the container killed through
// containerd, and a planned switchover (status.targetPrimary). The 50-fault run with every kind
// is bench/failover (docs/failover-testing.md).
func TestFailoverCheckerShortRun(t *testing.T) {
	ns := Namespace(t)
	ctx := context.Background()
	ce := &chaos.Env{Client: env.c, Kubectl: env.kubectl, Kubeconfig: env.kubeconfig, CtrSocket: env.ctrSocket,
		Dialer: &chaos.NetnsDialer{Path: chaos.NodeNetns}, Logf: t.Logf}
	target := chaos.Target{Namespace: ns, Name: "db"}
	if err := ce.CreateCluster(ctx, chaos.ClusterSpec(target, mysqlImage, mysqlv1.DataDurabilityRequired, 600000)); err != nil {
		t.Fatal(err)
	}
	kinds := []chaos.Kind{chaos.MysqldKill, chaos.ContainerKill, chaos.PodDelete}
	rep, err := chaos.Run(ctx, ce, chaos.Config{Target: target, Faults: len(kinds), Kinds: kinds,
		ReadyTimeout: 3 * time.Minute, WriteTimeout: 90 * time.Second, CatchUp: 30 * time.Second})
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
	}
}
