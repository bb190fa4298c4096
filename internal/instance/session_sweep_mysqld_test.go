package instance

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// testDemotedSessionSweep: on the real primary and a real replica, a primary demoted through
// POST /demote ends every client session a pool opens again while a write Service routes to it
// (each lives about a SweepInterval), keeps the replica's dump thread, stops SweepSettle after it
// left the write Services, and never ends a session of a server that takes writes again. The
// primary is left writable for the steps that follow.
func testDemotedSessionSweep(t *testing.T, m map[string]*member, primary, replica string) {
	ctx := t.Context()
	var routed atomic.Bool
	routed.Store(true)
	sweep := &SessionSweep{Op: m[primary].op, Routed: func(context.Context) (bool, error) { return routed.Load(), nil },
		Clock: clock.RealClock{}, Log: testr.New(t)}
	sweepCtx, stop := context.WithCancel(ctx)
	defer stop()
	go sweep.Run(sweepCtx)
	p := serveControlAPI(t, &ControlAPI{Instance: primary, Op: m[primary].op, AllowedClients: []string{certs.OperatorCommonName},
		Sweep: sweep, Log: testr.New(t)})
	m[primary].exec(t, "CREATE USER IF NOT EXISTS 'app'@'%' IDENTIFIED BY 'app-pw'", "GRANT SELECT ON *.* TO 'app'@'%'")
	app, err := m[primary].srv.OpenDB(ctx, "app", "app-pw", "")
	check.Must(t, err)
	defer app.Close()
	// life opens a session as a pool does after losing one, and runs a statement every 10 ms
	// until the session is ended or limit passed: how long it lasted.
	life := func(limit time.Duration) time.Duration {
		t.Helper()
		conn, err := app.Conn(ctx)
		check.Must(t, err)
		defer conn.Close()
		start := time.Now()
		for time.Since(start) < limit {
			if _, err := conn.ExecContext(ctx, "SELECT 1"); err != nil {
				return time.Since(start)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return time.Since(start)
	}
	var dumps []int64
	check.Eventually(t, 15*time.Second, primary+" serves its replicas a dump thread", func(context.Context) (bool, error) {
		dumps = dumpThreads(t, m[primary])
		return len(dumps) > 0, nil
	})

	check.Must(t, p.operator.Demote(ctx, p.target))
	// The test's control API reads mysqld as root over TCP, a session the sweep ends too (an
	// instance manager reads it over the local socket, which the sweep keeps): a read that lost its
	// session answers 503 once and is asked again, as the operator's next reconcile would.
	var lastErr error
	reported := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !reported; time.Sleep(100 * time.Millisecond) {
		st, err := p.operator.Status(ctx, p.target)
		lastErr = err
		reported = err == nil && st.EndingSessions
		if err == nil && !st.EndingSessions {
			break
		}
	}
	if !reported {
		t.Errorf("the demoted %s's report during the sweep: ending sessions false (%v); want true, so that no Service routes to it", primary, lastErr)
	}
	var longest time.Duration
	for range 10 {
		l := life(3 * time.Second)
		if l >= 3*time.Second {
			t.Fatalf("a session opened on the demoted %s while a write Service routes to it lasted %s; want it ended", primary, l)
		}
		longest = max(longest, l)
	}
	t.Logf("10 sessions opened on the demoted primary while routed: the longest lasted %s (sweep every %s)", longest, SweepInterval)
	if got := dumpThreads(t, m[primary]); !slices.Equal(got, dumps) {
		t.Errorf("the dump threads went from %v to %v during the sweep; want the replica's kept", dumps, got)
	}
	if st, err := m[replica].op.Status(ctx); err != nil || st.Replication == nil || st.Replication.IORunning != "Yes" {
		t.Errorf("%s's receiver during the sweep: %+v (%v); want running", replica, st, err)
	}

	routed.Store(false)
	check.Eventually(t, SweepSettle+10*time.Second, "the sweep stops once out of the write Services", func(context.Context) (bool, error) {
		return life(time.Second) >= time.Second, nil
	})
	if l := life(2 * time.Second); l < 2*time.Second {
		t.Errorf("a session of the demoted %s out of the write Services lasted %s after the sweep stopped; want it kept", primary, l)
	}
	if sweep.Active() {
		t.Error("the sweep stopped but still reports itself active")
	}

	// A promotion stops a sweep under way before the server turns writable.
	sweep.Trigger()
	check.Eventually(t, 5*time.Second, "a new sweep ends sessions", func(context.Context) (bool, error) {
		return life(time.Second) < time.Second, nil
	})
	sweep.Stop()
	if sweep.Active() {
		t.Error("a stopped sweep still reports itself active")
	}
	if l := life(time.Second); l < time.Second {
		t.Errorf("a session of %s lasted %s after the sweep was stopped; want it kept", primary, l)
	}

	// Writable again (an aborted switchover): a sweep triggered now ends nothing.
	routed.Store(true)
	check.Must(t, m[primary].op.SetReadOnly(ctx, false))
	sweep.Trigger()
	if l := life(2 * time.Second); l < 2*time.Second {
		t.Errorf("a sweep ended a session of the writable %s after %s", primary, l)
	}
}

// dumpThreads lists the ids of the dump threads n serves its replicas.
func dumpThreads(t *testing.T, n *member) []int64 {
	t.Helper()
	rows, err := n.db.QueryContext(t.Context(),
		"SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' ORDER BY ID")
	check.Must(t, err)
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		check.Must(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	check.Must(t, rows.Err())
	return ids
}
