package mysql_test

import (
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

const semiSyncTimeout = 500 * time.Millisecond

func testSemiSync(t *testing.T, primary, r1, r2 *node) {
	ctx := t.Context()
	for _, n := range []*node{primary, r1, r2} {
		check.Must(t, n.op.InstallSemiSyncPlugins(ctx))
		check.Must(t, n.op.InstallSemiSyncPlugins(ctx)) // idempotent
	}
	for _, r := range []*node{r1, r2} {
		check.Must(t, r.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 1, Timeout: semiSyncTimeout}))
	}
	check.Must(t, primary.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 2, Timeout: semiSyncTimeout}))
	check.Eventually(t, 10*time.Second, "two semi-sync clients", check.True(func() bool {
		timedInsert(t, primary, 0) // the source turns semi-sync on at an acknowledgement
		st := primary.status(t).SemiSync
		return st.Clients == 2 && st.SourceActive
	}))
	st := primary.status(t).SemiSync
	if st.WaitForReplicaCount != 2 || st.Timeout != semiSyncTimeout || !st.SourceEnabled {
		t.Fatalf("primary semi-sync variables: %+v", st)
	}
	yes := st.YesTx
	if took := timedInsert(t, primary, 10); took > semiSyncTimeout*9/10 {
		t.Errorf("an acknowledged commit took %s", took)
	}
	if st := primary.status(t).SemiSync; st.YesTx != yes+1 {
		t.Errorf("yes_tx %d -> %d, want one more", yes, st.YesTx)
	}

	// One replica away: the commit waits the timeout, then the source falls back to async.
	check.Must(t, r1.op.StopReplication(ctx))
	took := timedInsert(t, primary, 11)
	t.Logf("commit with one of two acknowledgements missing took %s (timeout %s)", took, semiSyncTimeout)
	if took < semiSyncTimeout*9/10 || took > semiSyncTimeout*4 {
		t.Errorf("commit took %s, want about the %s timeout", took, semiSyncTimeout)
	}
	st = primary.status(t).SemiSync
	if st.SourceActive || st.NoTx == 0 {
		t.Errorf("after the timeout: %+v, want fallen back to async (status OFF, no_tx > 0)", st)
	}
	if took := timedInsert(t, primary, 12); took > semiSyncTimeout*9/10 {
		t.Errorf("a commit in async fallback took %s", took)
	}

	// The replica returns: once it has caught up, semi-sync switches back on by itself.
	begin := time.Now()
	check.Must(t, r1.op.StartReplication(ctx))
	check.Eventually(t, 15*time.Second, "semi-sync active again", check.True(func() bool {
		timedInsert(t, primary, 0)
		return primary.status(t).SemiSync.SourceActive
	}))
	t.Logf("semi-sync active again %s after the replica restarted", time.Since(begin).Round(time.Millisecond))
	yes = primary.status(t).SemiSync.YesTx
	if took := timedInsert(t, primary, 13); took > semiSyncTimeout*9/10 {
		t.Errorf("an acknowledged commit after recovery took %s", took)
	}
	if st := primary.status(t).SemiSync; st.YesTx != yes+1 {
		t.Errorf("yes_tx %d -> %d after recovery, want one more", yes, st.YesTx)
	}
}

// testStatusWhileCommitWaits: the operator takes a primary whose status does not come within
// seconds for a dead one, so reading it must not wait behind a commit that waits for a missing
// acknowledgement, nor must changing the acknowledgement count, which releases the commit.
func testStatusWhileCommitWaits(t *testing.T, primary, r1 *node) {
	ctx := t.Context()
	check.Must(t, primary.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 2, Timeout: time.Minute}))
	check.Must(t, r1.op.StopReplication(ctx))
	committed := make(chan error, 1)
	go func() {
		_, err := primary.db.ExecContext(ctx, "INSERT INTO app.t VALUES (14, 'row')")
		committed <- err
	}()
	check.Eventually(t, 10*time.Second, "a commit waiting for an acknowledgement", check.True(func() bool {
		var n int
		check.Must(t, primary.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.processlist WHERE state LIKE 'Waiting for semi-sync ACK%'").Scan(&n))
		return n == 1
	}))
	for range 3 {
		begin := time.Now()
		st := primary.status(t)
		if took := time.Since(begin); took > time.Second {
			t.Errorf("status took %s while a commit waits", took)
		}
		// The number of semi-sync clients is not checked: the primary counts the stopped
		// replica until its dump thread notices the closed connection, which may take a
		// heartbeat period.
		if !st.Writable() || !st.SemiSync.SourceActive || st.SemiSync.WaitForReplicaCount != 2 {
			t.Errorf("status while a commit waits: writable %v, %+v; want writable, semi-sync active, waiting for two", st.Writable(), st.SemiSync)
		}
		// The waiting commit is in the binary log, not yet in gtid_executed: the status
		// reports it in flight.
		if st.GTIDInFlight.Count() != 1 || !st.GTIDExecuted.Subtract(st.GTIDInFlight).Equal(st.GTIDExecuted) {
			t.Errorf("status while a commit waits: in flight %q, executed %q; want the one waiting commit in flight and not executed",
				st.GTIDInFlight, st.GTIDExecuted)
		}
	}
	waiting := primary.status(t).GTIDInFlight
	select {
	case err := <-committed:
		t.Fatalf("the commit returned (%v) without its second acknowledgement", err)
	default:
	}
	begin := time.Now()
	check.Must(t, primary.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 1, Timeout: time.Minute}))
	if took := time.Since(begin); took > time.Second {
		t.Errorf("lowering the acknowledgement count took %s while a commit waits", took)
	}
	select {
	case err := <-committed:
		check.Must(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the commit still waits with one acknowledgement required")
	}
	if st := primary.status(t); !st.GTIDInFlight.IsEmpty() || !st.GTIDExecuted.Contains(waiting) {
		t.Errorf("after the commit: in flight %q, executed %q; want nothing in flight and %q executed", st.GTIDInFlight, st.GTIDExecuted, waiting)
	}
	if st := primary.status(t).SemiSync; !st.SourceActive || st.WaitForReplicaCount != 1 {
		t.Errorf("after lowering the count: %+v, want semi-sync active, one acknowledgement", st)
	}

	check.Must(t, r1.op.StartReplication(ctx))
	check.Must(t, primary.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 2, Timeout: semiSyncTimeout}))
	check.Eventually(t, 15*time.Second, "two semi-sync clients again", check.True(func() bool {
		timedInsert(t, primary, 0)
		st := primary.status(t).SemiSync
		return st.Clients == 2 && st.SourceActive
	}))
}

// timedInsert commits one row (id 0 means an upsert of a heartbeat row) and returns how long it took.
func timedInsert(t *testing.T, n *node, id int) time.Duration {
	t.Helper()
	begin := time.Now()
	var err error
	if id == 0 {
		_, err = n.db.ExecContext(t.Context(), "INSERT INTO app.t VALUES (0, 'beat') ON DUPLICATE KEY UPDATE v = NOW(6)")
	} else {
		_, err = n.db.ExecContext(t.Context(), "INSERT INTO app.t VALUES (?, 'row')", id)
	}
	if err != nil {
		t.Fatalf("insert %d: %v", id, err)
	}
	return time.Since(begin)
}
