package instance

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// TestFallbackReleasesAnAccountStatement: a primary with no semi-sync replica connected creates
// its accounts (as a promoted replica does before it records itself): the account statement waits
// for an acknowledgement and, while it waits, no new session can log in. The fallback, on the
// session it opened before (mysql.Factory.NewKeptLocalAdmin), still releases it after
// timeoutMillis under a fresh Lease.
func TestFallbackReleasesAnAccountStatement(t *testing.T) {
	m := startMembers(t, "c-1")["c-1"]
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const timeoutMillis = 1000
	spec := &v1alpha1.ClusterSpec{Instances: 1, MinSyncReplicas: 1, MaxSyncReplicas: 1,
		MySQL: v1alpha1.MySQLConfiguration{SemiSync: &v1alpha1.SemiSyncConfiguration{
			Enabled: true, TimeoutMillis: timeoutMillis, DataDurability: v1alpha1.DataDurabilityPreferred}}}
	if err := m.op.InstallSemiSyncPlugins(ctx); err != nil {
		t.Fatal(err)
	}
	kept, err := mysql.NewFactory().NewKeptLocalAdmin(m.srv.MySQLConfig("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	lease := &switchedLease{}
	lease.held.Store(true)
	fb := &SemiSyncFallback{Op: kept, Lease: lease, Clock: clock.RealClock{}, Log: testr.New(t).WithName("semisync")}
	fb.Configure(spec)
	if _, err := fb.CheckOnce(ctx); err != nil { // opens its session, as serve does
		t.Fatal(err)
	}
	if err := m.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 1, Timeout: mysql.SourceTimeoutNever}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kept.SetSemiSyncSourceEnabled(context.Background(), false) })
	if _, err := fb.CheckOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := m.op.Status(ctx); err != nil || !st.SemiSync.SourceActive {
		t.Fatalf("semi-sync source not active before the accounts: %+v, %v", st, err)
	}
	begin := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := m.db.ExecContext(context.WithoutCancel(ctx), "CREATE USER 'waits'@'%' IDENTIFIED BY 'waits-pw'")
		done <- err
	}()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go fb.Run(runCtx)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(begin)
		t.Logf("the account statements completed %s after they began", took.Round(time.Millisecond))
		if took < timeoutMillis*time.Millisecond {
			t.Errorf("completed after %s, before timeoutMillis: was anything waiting?", took)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the account statements still wait 30 s after they began: the fallback did not release them")
	}
	// The commit returns as soon as the source side is off, which may be before the fallback
	// records it.
	deadline := time.Now().Add(5 * time.Second)
	for fellBack, _ := fb.FallenBack(); !fellBack; fellBack, _ = fb.FallenBack() {
		if time.Now().After(deadline) {
			t.Fatal("the fallback does not report having fallen back")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
