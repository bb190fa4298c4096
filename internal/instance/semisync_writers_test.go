package instance

import (
	"context"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// testSemiSyncWritersInterleaved: two writers set a primary's semi-sync variables in one
// instance manager, the operator's count (POST /semisync) and the role pass's convergence to the
// spec (ConvergeSemiSync, from the status the pass read when it began). A pass that read the
// status, then puts back a wait point changed by hand after the operator raised the count, must
// not put the count it read back: the primary would wait for fewer acknowledgements than the operator's plan
// until the operator applied it again.
func testSemiSyncWritersInterleaved(t *testing.T, m map[string]*member, primary string) {
	p := m[primary]
	api := serveControlAPI(t, &ControlAPI{Instance: primary, Op: p.op, AllowedClients: []string{certs.OperatorCommonName}})
	setCount := func(n int32) {
		t.Helper()
		if err := api.operator.SetSemiSync(t.Context(), api.target, instanceclient.SemiSyncRequest{WaitForReplicaCount: n}); err != nil {
			t.Fatal(err)
		}
	}
	setCount(1)
	read := semiSync(t, p) // the role pass's read, at the start of its pass
	if !read.SourceEnabled || read.WaitForReplicaCount != 1 {
		t.Fatalf("before: %+v, want the source side on with the count 1", read)
	}
	t.Cleanup(func() { // as the later steps expect it; t.Context() is cancelled by now
		if err := p.op.ApplySemiSync(context.Background(), mysql.SemiSyncSettings{SourceEnabled: true,
			ReplicaEnabled: read.ReplicaEnabled, WaitForReplicaCount: read.WaitForReplicaCount, Timeout: read.Timeout}); err != nil {
			t.Errorf("restoring the semi-sync settings: %v", err)
		}
	})

	setCount(2) // the operator's plan, between the pass's read and its write
	spec := &v1alpha1.ClusterSpec{Instances: 3, MinSyncReplicas: 2, MaxSyncReplicas: 2,
		MySQL: v1alpha1.MySQLConfiguration{SemiSync: &v1alpha1.SemiSyncConfiguration{
			Enabled: true, TimeoutMillis: read.Timeout.Milliseconds(), DataDurability: v1alpha1.DataDurabilityPreferred}}}
	p.exec(t, "SET GLOBAL rpl_semi_sync_source_wait_point = AFTER_COMMIT")
	read.WaitPoint = "AFTER_COMMIT"
	changed, err := ConvergeSemiSync(t.Context(), p.op, spec, true, read, false, semisync.NotTold)
	if err != nil || !changed {
		t.Fatalf("ConvergeSemiSync: changed %v, %v; want the wait point put back", changed, err)
	}
	if st := semiSync(t, p); st.WaitForReplicaCount != 2 || st.WaitPoint != mysql.SourceWaitPoint || !st.SourceEnabled ||
		st.Timeout != mysql.SourceTimeoutNever {
		t.Errorf("after the pass: count %d, wait point %s, timeout %s, source %v; want the operator's count 2 kept, AFTER_SYNC, never",
			st.WaitForReplicaCount, st.WaitPoint, st.Timeout, st.SourceEnabled)
	}

	// A pass that read the source side on, which is off by the time it writes (a fence released
	// the waiting commits, or mysqld restarted with its defaults): it writes nothing rather than
	// turn the source side on with a count nobody chose; the next pass, reading it off, starts
	// it with the spec's count.
	p.exec(t, "SET GLOBAL rpl_semi_sync_source_wait_point = AFTER_COMMIT")
	stale := semiSync(t, p)
	if err := p.op.SetSemiSyncSourceEnabled(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	if changed, err := ConvergeSemiSync(t.Context(), p.op, spec, true, stale, false, semisync.NotTold); err == nil {
		t.Errorf("a pass on a stale read of the source side: changed %v, no error; want it refused", changed)
	}
	if st := semiSync(t, p); st.SourceEnabled || st.WaitPoint != "AFTER_COMMIT" {
		t.Errorf("after the refused pass: source %v, wait point %s; want nothing written", st.SourceEnabled, st.WaitPoint)
	}
	// While the instance manager has fallen back, a pass leaves the source side off.
	if _, err := ConvergeSemiSync(t.Context(), p.op, spec, true, semiSync(t, p), true, semisync.NotTold); err != nil {
		t.Fatal(err)
	}
	if st := semiSync(t, p); st.SourceEnabled || st.WaitPoint != mysql.SourceWaitPoint {
		t.Errorf("a pass after a fallback: source %v, wait point %s; want the source side left off, AFTER_SYNC put back", st.SourceEnabled, st.WaitPoint)
	}
	if _, err := ConvergeSemiSync(t.Context(), p.op, spec, true, semiSync(t, p), false, semisync.NotTold); err != nil {
		t.Fatal(err)
	}
	if st := semiSync(t, p); !st.SourceEnabled || st.WaitForReplicaCount != 1 || st.Timeout != mysql.SourceTimeoutNever {
		t.Errorf("the next pass: source %v, count %d, timeout %s; want on with the spec's starting count 1, never timing out",
			st.SourceEnabled, st.WaitForReplicaCount, st.Timeout)
	}
}
