package mysql_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/cutproxy"
)

// TestStopReplicationInsideAPartialTransaction: a failover stops a replica's receiver, perhaps in
// the middle of a transaction; the replica then follows the new primary, or is the new primary.
// A multi-threaded applier that has begun that transaction waits for its end, which never comes,
// and STOP REPLICA waits for it up to 60 s (the server's own limit): meanwhile the replica
// neither follows nor acknowledges, and a promotion does not end. Both must end within 20 s, and
// a repointed replica then holds the whole transaction, once.
func TestStopReplicationInsideAPartialTransaction(t *testing.T) {
	// The applier's thread is found through performance_schema.threads.
	nodes := startNodes(t, 2, "--performance-schema=ON")
	primary, replica := nodes[0], nodes[1]
	ctx := t.Context()
	check.Must(t, primary.op.SetReadOnly(ctx, false))
	check.Must(t, primary.op.CreateUsers(ctx, testUsers))
	primary.exec(t, "CREATE DATABASE part", "CREATE TABLE part.t (id INT PRIMARY KEY, v TEXT)")
	check.Must(t, replica.op.SetReadOnly(ctx, true))
	rows := 0
	// receiveInPart makes the replica receive, through a proxy, the first 32 KiB of a transaction
	// of about 2 MB, then stops its receiver.
	receiveInPart := func(t *testing.T) {
		proxy := cutproxy.Start(t, net.JoinHostPort(primary.srv.Host, "0"), net.JoinHostPort(primary.srv.Host, strconv.Itoa(primary.srv.Port)))
		through := source(primary, replica)
		_, port, _ := net.SplitHostPort(proxy.Addr())
		through.Port, _ = strconv.Atoi(port)
		check.Must(t, replica.op.ConfigureReplication(ctx, through))
		check.Must(t, replica.op.StartReplication(ctx))
		check.Must(t, replica.op.WaitForGTIDSet(ctx, primary.status(t).GTIDExecuted, 10*time.Second))
		proxy.StallAfter(32 << 10)
		primary.exec(t, "INSERT INTO part.t (id, v) WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 1000) "+
			"SELECT n + "+strconv.Itoa(rows)+", REPEAT('x', 2000) FROM s")
		rows += 1000
		check.Eventually(t, 10*time.Second, "the applier is inside the transaction received in part", func(ctx context.Context) (bool, error) {
			var processing string
			err := replica.db.QueryRowContext(ctx, "SELECT PROCESSING_TRANSACTION FROM performance_schema.replication_applier_status_by_coordinator").Scan(&processing)
			return processing != "", err
		})
		check.Must(t, replica.op.StopReceiver(ctx))
	}
	within := func(t *testing.T, what string, f func(ctx context.Context) error) {
		t.Helper()
		bounded, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		began := time.Now()
		if err := f(bounded); err != nil {
			t.Fatalf("%s: %v (after %s)", what, err, time.Since(began).Round(time.Millisecond))
		}
		t.Logf("%s in %s", what, time.Since(began).Round(time.Millisecond))
	}

	t.Run("a replica follows a new source at once and receives the transaction whole", func(t *testing.T) {
		receiveInPart(t)
		within(t, "repointed", func(ctx context.Context) error {
			if err := replica.op.ConfigureReplication(ctx, source(primary, replica)); err != nil {
				return err
			}
			return replica.op.StartReplication(ctx)
		})
		check.Must(t, replica.op.WaitForGTIDSet(ctx, primary.status(t).GTIDExecuted, 20*time.Second))
		var n int
		check.Must(t, replica.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM part.t").Scan(&n))
		if n != rows {
			t.Errorf("the replica holds %d rows, want %d", n, rows)
		}
		if rep := replica.status(t).Replication; rep == nil || !rep.Healthy() || rep.SourcePort != primary.srv.Port {
			t.Errorf("after the repoint, replication is %+v, want both threads running from the primary", rep)
		}
	})
	t.Run("a promotion drops replication at once", func(t *testing.T) {
		receiveInPart(t)
		within(t, "replication reset", replica.op.ResetReplication)
		if rep := replica.status(t).Replication; rep != nil {
			t.Errorf("after the reset, replication is %+v, want none", rep)
		}
	})
}
