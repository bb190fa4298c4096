package instance

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// relayLogKeys are the owned settings that decide what a replica's relay log keeps across a
// mysqld start.
var relayLogKeys = []string{"relay_log", "relay_log_recovery", "sync_relay_log", "skip_replica_start"}

// ownedArgs returns the owned settings named by keys as mysqld command-line options.
func ownedArgs(keys ...string) []string {
	var args []string
	for _, kv := range baseMyCnfInput().owned() {
		for _, k := range keys {
			if kv[0] == k {
				args = append(args, "--"+strings.ReplaceAll(k, "_", "-")+"="+kv[1])
			}
		}
	}
	return args
}

// TestRelayLogKeepsAcknowledgedTail: only replica A acknowledges (B is asynchronous and its
// receiver is stopped, so A alone holds the last commits), and A's applier is behind, so the
// acknowledged tail is in its relay log only. The primary's and A's mysqld are killed (-9); A is
// started again with the primary still down. With the owned settings A applies every
// acknowledged write from its relay log, also when it was killed while receiving the primary's
// commits (a transaction cut in two at the end of the relay log is dropped at start); with relay_log_recovery ON (the setting before) mysqld throws that relay log away
// at start, to fetch it again from a source that is gone, and the tail is lost. A crash of the
// operating system cannot be produced here: it is what sync_relay_log covers
// (docs/replication-failover.md, relay log durability).
func TestRelayLogKeepsAcknowledgedTail(t *testing.T) {
	owned := ownedArgs(relayLogKeys...)
	for _, tc := range []struct {
		rule       string
		args       []string
		duringLoad bool
		keepsAll   bool
	}{
		{"the owned settings keep the acknowledged tail in the relay log across a crash with the source gone", owned, false, true},
		{"the owned settings keep it when A is killed while it receives the primary's commits", owned, true, true},
		{"relay_log_recovery ON throws the acknowledged tail away at start", append(owned, "--relay-log-recovery=ON"), false, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			t.Logf("mysqld options: %s", strings.Join(tc.args, " "))
			acked, missing, applierErr := crashWithAckingReplica(t, tc.args, tc.duringLoad)
			t.Logf("%d rows whose commit A alone acknowledged; after its restart A lacks %d of them; applier error %q",
				len(acked), len(missing), applierErr)
			if tc.keepsAll && (len(missing) != 0 || applierErr != "") {
				t.Errorf("A lost acknowledged writes %v across its restart (applier error %q)", missing, applierErr)
			}
			if !tc.keepsAll && len(missing) == 0 {
				t.Errorf("A kept every acknowledged write with %v: the test no longer shows what relay_log_recovery=ON loses", tc.args)
			}
		})
	}
}

// tailCommits is how many commits only replica A acknowledges, unapplied, before the crash.
const tailCommits = 200

// crashWithAckingReplica runs the scenario of TestRelayLogKeepsAcknowledgedTail on three servers
// started with args: tailCommits commits, then the kills; or, duringLoad, a writer committing
// until A is killed in its stream, then the primary. It returns the rows whose commit the primary
// acknowledged, those of them A lacks after its restart, and its applier's error.
func crashWithAckingReplica(t *testing.T, args []string, duringLoad bool) (acked, missing []int, applierErr string) {
	ctx := t.Context()
	servers := mysqldtest.Start(t, mysqldtest.Options{Count: 3, ExtraArgs: args})
	ops := make([]mysql.Operator, 3)
	for i, s := range servers {
		op, err := mysql.NewFactory().New(s.MySQLConfig("root", "", ""))
		check.Must(t, err)
		t.Cleanup(func() { op.Close() })
		check.Must(t, op.InstallSemiSyncPlugins(ctx))
		ops[i] = op
	}
	p, a, b := ops[0], ops[1], ops[2]
	pdb, adb := servers[0].RootDB(t), servers[1].RootDB(t)
	check.Must(t, p.SetReadOnly(ctx, false))
	check.Must(t, p.CreateUsers(ctx, roleTestUsers))
	for i, r := range []mysql.Operator{a, b} {
		s := servers[i+1]
		check.Must(t, r.ConfigureReplication(ctx, mysql.Source{Host: servers[0].Host, Port: servers[0].Port,
			User: roleTestUsers.Replication.Name, Password: roleTestUsers.Replication.Password,
			CAFile: s.InChroot(s.TLS.CAFile), CertFile: s.InChroot(s.TLS.ClientCertFile), KeyFile: s.InChroot(s.TLS.ClientKeyFile),
			VerifyServerCert: true}))
		check.Must(t, r.StartReplication(ctx))
	}
	execAll(t, pdb, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(200))")
	base := serverStatus(t, p).GTIDExecuted
	for _, r := range []mysql.Operator{a, b} {
		check.Must(t, r.WaitForGTIDSet(ctx, base, 20*time.Second))
	}
	// A acknowledges; B does not, and stops receiving, so A alone holds what follows. A's
	// applier stops: what A acknowledges stays in its relay log.
	check.Must(t, a.ApplySemiSync(ctx, mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 1, Timeout: time.Hour}))
	check.Must(t, b.StopReceiver(ctx))
	execAll(t, adb, "STOP REPLICA SQL_THREAD")
	check.Must(t, p.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 1, Timeout: time.Hour}))
	check.Eventually(t, 20*time.Second, "A acknowledging the primary's commits", check.True(func() bool {
		ss := serverStatus(t, p).SemiSync
		return ss.SourceActive && ss.Clients == 1
	}))
	if duringLoad {
		acked = killDuringLoad(t, pdb, servers[0], servers[1])
	} else {
		for i := range tailCommits {
			execAll(t, pdb, fmt.Sprintf("INSERT INTO app.t VALUES (%d, REPEAT('a', 200))", i))
			acked = append(acked, i)
		}
		st := serverStatus(t, p)
		if !st.SemiSync.SourceActive || st.SemiSync.NoTx != 0 {
			t.Fatalf("primary semi-sync %+v: want every commit acknowledged (active, no_tx 0)", st.SemiSync)
		}
		tail := st.GTIDExecuted.Subtract(base)
		if ast := serverStatus(t, a); !ast.Replication.RetrievedGTIDSet.Contains(tail) || ast.GTIDExecuted.Contains(st.GTIDExecuted) {
			t.Fatalf("before the crash A retrieved %s and executed %s: want the tail %s retrieved, not applied",
				ast.Replication.RetrievedGTIDSet, ast.GTIDExecuted, tail)
		}
		if bst := serverStatus(t, b); bst.GTIDExecuted.Contains(st.GTIDExecuted) {
			t.Fatalf("B holds %s: A is not the only one holding the acknowledged tail", bst.GTIDExecuted)
		}
		check.Must(t, servers[0].Kill())
		check.Must(t, servers[1].Kill())
	}
	// A starts again with the primary down, and starts its threads as the instance manager does
	// for a replica of the current primary: the receiver keeps trying the dead source, the
	// applier applies what the relay log holds.
	check.Must(t, servers[1].Restart())
	check.Must(t, a.StartReplication(ctx))
	deadline := time.Now().Add(10 * time.Second)
	for {
		missing = missingRows(t, adb, acked)
		r := serverStatus(t, a).Replication
		if r != nil {
			applierErr = r.LastSQLError
		}
		if len(missing) == 0 || applierErr != "" || time.Now().After(deadline) {
			return acked, missing, applierErr
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// killDuringLoad commits rows on the primary from one session until A (replica) is killed in the
// middle of the stream, then kills the primary; it returns the rows whose commit returned.
func killDuringLoad(t *testing.T, pdb *sql.DB, primary, replica *mysqldtest.Server) []int {
	var mu sync.Mutex
	var acked []int
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			// Transactions of several events, so a kill lands inside one more often than not.
			if _, err := pdb.Exec(fmt.Sprintf("INSERT INTO app.t VALUES (%d, REPEAT('a', 200)), (%d, REPEAT('b', 200))", 2*i, 2*i+1)); err != nil {
				return
			}
			mu.Lock()
			acked = append(acked, 2*i, 2*i+1)
			mu.Unlock()
		}
	}()
	check.Eventually(t, 30*time.Second, "commits acknowledged by A", check.True(func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 2*tailCommits
	}))
	check.Must(t, replica.Kill())
	check.Must(t, primary.Kill())
	<-done
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(acked)
}

// missingRows returns the ids of want that the table app.t on db lacks.
func missingRows(t *testing.T, db *sql.DB, want []int) []int {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "SELECT id FROM app.t")
	check.Must(t, err)
	defer rows.Close()
	have := map[int]bool{}
	for rows.Next() {
		var id int
		check.Must(t, rows.Scan(&id))
		have[id] = true
	}
	check.Must(t, rows.Err())
	var out []int
	for _, id := range want {
		if !have[id] {
			out = append(out, id)
		}
	}
	return out
}

func serverStatus(t *testing.T, op mysql.Operator) *mysql.Status {
	t.Helper()
	st, err := op.Status(t.Context())
	check.Must(t, err)
	return st
}

func execAll(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
