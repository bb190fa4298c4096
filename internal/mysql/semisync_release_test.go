package mysql_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// testOnlyTheSwitchReleasesAWait: with mysqld's timeout at mysql.SourceTimeoutNever, what the
// instance manager's fallback relies on. A commit waiting for an acknowledgement is not released
// by lowering the timeout (its deadline was computed when its wait began), nor by ending its
// session (KILL CONNECTION: the client's socket closes, the commit still waits); switching the
// source side off releases it. While the source side is off, the semi-sync replicas stay counted
// (Rpl_semi_sync_source_clients) and a dump thread that has sent everything says so, which is how
// the instance manager sees that semi-sync can come back.
func testOnlyTheSwitchReleasesAWait(t *testing.T, primary, r1 *node) {
	ctx := t.Context()
	check.Must(t, primary.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 2, Timeout: mysql.SourceTimeoutNever}))
	st := primary.status(t).SemiSync
	if st.Timeout != mysql.SourceTimeoutNever || st.WaitPoint != mysql.SourceWaitPoint || st.WaitNoReplica != mysql.SourceWaitNoReplica {
		t.Fatalf("applied: timeout %s, wait point %q, wait_no_replica %v", st.Timeout, st.WaitPoint, st.WaitNoReplica)
	}
	check.Must(t, r1.op.StopReplication(ctx))
	conn, err := primary.db.Conn(ctx)
	check.Must(t, err)
	t.Cleanup(func() { conn.Close() })
	// The steps after this one write with a replica stopped: the source side is switched off at
	// the end whatever happened, so that no later commit waits for ever (and so that a failed step
	// does not leave the commit, and the test, hanging).
	t.Cleanup(func() { _ = primary.op.SetSemiSyncSourceEnabled(context.Background(), false) })
	var connID int64
	check.Must(t, conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&connID))
	committed := make(chan error, 1)
	go func() {
		_, err := conn.ExecContext(context.WithoutCancel(ctx), "INSERT INTO app.t VALUES (20, 'row')")
		committed <- err
	}()
	stillWaiting := func(what string) {
		t.Helper()
		st := primary.status(t)
		if st.SemiSync.AckWaiters != 1 || !st.SemiSync.SourceActive || st.GTIDInFlight.Count() != 1 {
			t.Fatalf("%s: %d commits waiting, active %v, in flight %q; want the commit still waiting",
				what, st.SemiSync.AckWaiters, st.SemiSync.SourceActive, st.GTIDInFlight)
		}
	}
	check.Eventually(t, 10*time.Second, "a commit waiting for an acknowledgement", check.True(func() bool {
		return primary.status(t).SemiSync.AckWaiters == 1
	}))

	check.Must(t, primary.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 2, Timeout: 100 * time.Millisecond}))
	time.Sleep(2 * time.Second)
	stillWaiting("2 s after the timeout was lowered to 100 ms")

	if _, err := primary.db.ExecContext(ctx, "KILL CONNECTION "+strconv.FormatInt(connID, 10)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-committed:
		t.Logf("the killed session's client got: %v", err)
	case <-time.After(5 * time.Second):
		t.Logf("KILL CONNECTION did not return to the killed session's client within 5 s")
	}
	time.Sleep(2 * time.Second)
	stillWaiting("2 s after its session was killed")
	waiting := primary.status(t).GTIDInFlight

	check.Must(t, primary.op.SetSemiSyncSourceEnabled(ctx, false))
	check.Eventually(t, 5*time.Second, "the commit released with the source side off", check.True(func() bool {
		st := primary.status(t)
		return st.SemiSync.AckWaiters == 0 && st.GTIDExecuted.Contains(waiting)
	}))

	// Off, the source still counts its semi-sync replicas and shows which dump threads are idle.
	check.Must(t, r1.op.StartReplication(ctx))
	check.Eventually(t, 10*time.Second, "both replicas connected and caught up with the source side off", check.True(func() bool {
		st := primary.status(t).SemiSync
		t.Logf("source off: clients %d, dumps %d, caught up %d", st.Clients, st.Dumps, st.CaughtUpDumps)
		return st.Clients == 2 && st.Dumps == 2 && st.CaughtUpDumps == 2
	}))
	check.Must(t, primary.op.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 2, Timeout: mysql.SourceTimeoutNever}))
	if took := timedInsert(t, primary, 22); took > time.Second {
		t.Errorf("an acknowledged commit took %s after the source side came back", took)
	}
	if st := primary.status(t).SemiSync; !st.SourceActive {
		t.Errorf("after the source side came back: %+v", st)
	}
}
