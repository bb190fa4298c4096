package instance

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// switchedLease is a primary Lease whose freshness, and whether a fallback record can be
// written, the test sets: the fallback uses only these of PrimaryLease, whose renewal, self-fence
// and record writing are tested against the API server on their own.
type switchedLease struct {
	held, refuseRecord atomic.Bool
	mu                 sync.Mutex
	records            []failover.FallbackRecord
}

func (l *switchedLease) Enabled() bool { return true }
func (l *switchedLease) Held() bool    { return l.held.Load() }

func (l *switchedLease) RecordFallback(_ context.Context, rec failover.FallbackRecord) error {
	if l.refuseRecord.Load() {
		return errors.New("the API server refused the write")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, rec)
	return nil
}

func (l *switchedLease) FallbackRecord() *failover.FallbackRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.records) == 0 {
		return nil
	}
	r := l.records[len(l.records)-1]
	return &r
}

// testSemiSyncFallback: a primary under preferred (required raises timeoutMillis to the Lease TTL,
// semisync.RequiredMinFallback; the mechanism is the same) with one semi-sync replica (maxSyncReplicas 1)
// and one asynchronous one. The semi-sync replica's IO thread stops: a commit waits, and keeps
// waiting past timeoutMillis while the instance manager does not hold a fresh Lease; once it does,
// the manager releases it (source side off, reported as fallen back, not as disabled). When the
// replica reconnects and catches up, the manager turns semi-sync back on and commits are
// acknowledged again.
func testSemiSyncFallback(t *testing.T, m map[string]*member, primary string, replicas []string) {
	const timeoutMillis = 1000
	spec := &v1alpha1.ClusterSpec{Instances: 3, MinSyncReplicas: 1, MaxSyncReplicas: 1,
		MySQL: v1alpha1.MySQLConfiguration{SemiSync: &v1alpha1.SemiSyncConfiguration{
			Enabled: true, TimeoutMillis: timeoutMillis, DataDurability: v1alpha1.DataDurabilityPreferred}}}
	p := m[primary]
	plan := applyPlan(t, m, spec, primary, replicas)
	if len(plan.Participants) != 1 {
		t.Fatalf("plan %+v, want one participant", plan)
	}
	acking := m[plan.Participants[0]]
	waitSemiSync(t, p, func(s mysql.SemiSyncStatus) bool { return s.SourceActive && s.Clients == 1 })
	lease := &switchedLease{}
	fb := &SemiSyncFallback{Instance: primary, Op: p.op, Lease: lease, Clock: clock.RealClock{}, Log: testr.New(t).WithName("semisync")}
	fb.Configure(spec)
	check := func(want semisync.FallbackAction) semisync.FallbackDecision {
		t.Helper()
		d, err := fb.CheckOnce(t.Context())
		if err != nil || d.Action != want {
			t.Fatalf("CheckOnce = %s (%s), %v; want %s", d.Action, d.Reason, err, want)
		}
		return d
	}
	check(semisync.FallbackNone)

	if err := acking.op.StopReceiver(t.Context()); err != nil {
		t.Fatal(err)
	}
	committed := make(chan error, 1)
	begin := time.Now()
	go func() {
		_, err := p.db.ExecContext(context.WithoutCancel(t.Context()), "INSERT INTO app.t VALUES (5000)")
		committed <- err
	}()
	t.Cleanup(func() { // a failed step must not leave the commit waiting for ever
		if t.Failed() {
			_ = p.op.SetSemiSyncSourceEnabled(context.Background(), false)
		}
	})
	// Surely past timeoutMillis (the processlist counts whole seconds: semisync.AckWaitResolution)
	// without a fresh Lease: it waits.
	deadline := time.Now().Add(10 * time.Second)
	for semiSync(t, p).LongestAckWait < timeoutMillis*time.Millisecond+semisync.AckWaitResolution {
		if time.Now().After(deadline) {
			t.Fatalf("no commit waiting 2 s: %+v", semiSync(t, p))
		}
		d := check(semisync.FallbackNone)
		t.Logf("without a fresh Lease: %s", d.Reason)
		time.Sleep(FallbackCheckInterval)
	}
	d := check(semisync.FallbackNone)
	if st := semiSync(t, p); st.AckWaiters != 1 || !st.SourceEnabled || !st.SourceActive {
		t.Fatalf("without a fresh Lease, %s after the commit began (%s): %+v; want it still waiting", time.Since(begin), d.Reason, st)
	}
	select {
	case err := <-committed:
		t.Fatalf("the commit returned (%v) without an acknowledgement while the Lease was not fresh", err)
	default:
	}
	if fellBack, _ := fb.FallenBack(); fellBack {
		t.Fatal("fallen back without a fresh Lease")
	}

	// A fresh Lease, but the record cannot be written: the commit keeps waiting.
	lease.held.Store(true)
	lease.refuseRecord.Store(true)
	before := semiSync(t, p)
	if d, err := fb.CheckOnce(t.Context()); err == nil || d.Action != semisync.FallbackRelease {
		t.Fatalf("CheckOnce with the record refused = %s, %v; want a release that fails", d.Action, err)
	} else {
		t.Logf("the record refused: %v", err)
	}
	select {
	case err := <-committed:
		t.Fatalf("the commit returned (%v) although the fallback could not be recorded (%+v before)", err, before)
	case <-time.After(500 * time.Millisecond):
	}
	if fellBack, _ := fb.FallenBack(); fellBack || !semiSync(t, p).SourceEnabled {
		t.Fatal("fallen back without a record")
	}
	lease.refuseRecord.Store(false)
	stBefore, err := p.op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	gtidBefore := stBefore.GTIDExecuted.String()
	check(semisync.FallbackRelease)
	if rec := lease.FallbackRecord(); rec == nil || !rec.AtRisk(primary) || rec.GTIDExecuted != gtidBefore {
		t.Fatalf("the fallback record: %+v; want one naming %s at gtid_executed %q, not resumed", rec, primary, gtidBefore)
	}
	select {
	case err := <-committed:
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(begin)
		t.Logf("the commit returned %s after it began, released by the fallback", took.Round(time.Millisecond))
		if took < timeoutMillis*time.Millisecond {
			t.Errorf("released after %s, before timeoutMillis", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the commit still waits after the fallback")
	}
	st, err := p.op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	report := StatusReport(primary, st)
	if report.SemiSync != nil {
		t.Errorf("a source side off reads as disabled without the fallback's word: %+v", report.SemiSync)
	}
	if fellBack, _ := fb.FallenBack(); !fellBack || st.SemiSync.SourceEnabled {
		t.Fatalf("after the release: fallen back %v, source %v; want fallen back, source off", fellBack, st.SemiSync.SourceEnabled)
	}
	ReportFallenBack(&report, st)
	if s := report.SemiSync; s == nil || s.Active || !s.FallenBack {
		t.Errorf("the report after the fallback: %+v; want active false, fallen back", s)
	}
	expectCommit(t, p, false, false) // asynchronous now: no wait, no acknowledgement
	// The role pass leaves the source side off while fallen back.
	if _, err := ConvergeSemiSync(t.Context(), p.op, spec, true, semiSync(t, p), true, semisync.NotTold); err != nil {
		t.Fatal(err)
	}
	if semiSync(t, p).SourceEnabled {
		t.Fatal("the role pass turned the source side back on after a fallback")
	}

	// The replica reconnects and catches up: the manager turns semi-sync back on (the Lease plays
	// no part in that).
	lease.held.Store(false)
	if err := acking.op.StartReplication(t.Context()); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	for {
		d, err := fb.CheckOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if d.Action == semisync.FallbackReenable {
			break
		}
		if time.Since(back) > 15*time.Second {
			t.Fatalf("semi-sync not back 15 s after the replica reconnected: %s (%+v)", d.Reason, semiSync(t, p))
		}
		time.Sleep(FallbackCheckInterval)
	}
	t.Logf("semi-sync back on %s after the replica reconnected", time.Since(back).Round(time.Millisecond))
	if fellBack, _ := fb.FallenBack(); fellBack {
		t.Error("still fallen back after semi-sync came back")
	}
	if s := semiSync(t, p); !s.SourceEnabled || !s.SourceActive {
		t.Errorf("after turning back on: %+v", s)
	}
	expectCommit(t, p, true, false)
	if rec := lease.FallbackRecord(); !rec.AtRisk(primary) {
		t.Fatalf("the record says resumed without a fresh Lease to write it: %+v", rec)
	}
	// With the Lease fresh again, the record is marked resumed: a commit was acknowledged since
	// semi-sync came back, so a replica holds everything up to it.
	lease.held.Store(true)
	check(semisync.FallbackNone)
	if rec := lease.FallbackRecord(); rec == nil || rec.AtRisk(primary) || rec.ResumedGTIDSet == "" {
		t.Fatalf("after semi-sync came back: record %+v; want it resumed, with the GTID set", rec)
	} else {
		t.Logf("record: fell back at %s, resumed at %s", rec.GTIDExecuted, rec.ResumedGTIDSet)
	}
	lease.held.Store(false)

	// As the later steps expect it: both replicas acknowledge.
	spec.MinSyncReplicas, spec.MaxSyncReplicas = 2, 2
	spec.MySQL.SemiSync.DataDurability = v1alpha1.DataDurabilityPreferred
	applyPlan(t, m, spec, primary, replicas)
	waitSemiSync(t, p, func(s mysql.SemiSyncStatus) bool { return s.SourceActive && s.Clients == 2 })
}
