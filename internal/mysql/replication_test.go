package mysql_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestCluster drives one primary and two replicas through the life of a cluster, each step a
// subtest that relies on the previous ones: three servers are started once for all of them.
func TestCluster(t *testing.T) {
	nodes := startNodes(t, 3)
	primary, r1, r2 := nodes[0], nodes[1], nodes[2]
	ok := t.Run("replicas follow the primary over TLS with X509", func(t *testing.T) {
		testReplication(t, primary, r1, r2)
	})
	ok = ok && t.Run("REQUIRE SUBJECT pins the client certificate", func(t *testing.T) {
		testRequireSubject(t, primary)
	})
	ok = ok && t.Run("semi-sync counts acknowledgements, falls back to async and recovers", func(t *testing.T) {
		testSemiSync(t, primary, r1, r2)
	})
	ok = ok && t.Run("status answers while a commit waits for an acknowledgement", func(t *testing.T) {
		testStatusWhileCommitWaits(t, primary, r1)
	})
	ok = ok && t.Run("only switching the source side off releases a waiting commit", func(t *testing.T) {
		testOnlyTheSwitchReleasesAWait(t, primary, r1)
	})
	ok = ok && t.Run("an errant transaction on a replica is detected", func(t *testing.T) {
		testErrant(t, primary, r2)
	})
	ok = ok && t.Run("secrets stay out of errors", func(t *testing.T) {
		testSecrets(t, primary, r1)
	})
	ok = ok && t.Run("a replica cloned from the primary carries its GTID set", func(t *testing.T) {
		testClone(t, primary, r2)
	})
	if !ok {
		t.Fatal("a step failed; the steps after it did not run")
	}
}

func testReplication(t *testing.T, primary, r1, r2 *node) {
	ctx := t.Context()
	check.Must(t, primary.op.SetReadOnly(ctx, false))
	check.Must(t, primary.op.CreateUsers(ctx, testUsers))
	check.Must(t, primary.op.CreateUsers(ctx, testUsers)) // idempotent
	var sslType string
	check.Must(t, primary.db.QueryRowContext(ctx, "SELECT ssl_type FROM mysql.user WHERE user = ?",
		testUsers.Replication.Name).Scan(&sslType))
	if sslType != "X509" {
		t.Errorf("replication account ssl_type = %q, want X509", sslType)
	}
	for _, r := range []*node{r1, r2} {
		check.Must(t, r.op.SetReadOnly(ctx, true))
		check.Must(t, r.op.ConfigureReplication(ctx, source(primary, r)))
		check.Must(t, r.op.StartReplication(ctx))
		if hb, err := r.op.HeartbeatPeriod(ctx); err != nil || hb != mysql.SourceHeartbeatPeriod {
			t.Errorf("heartbeat period %s (%v), want %s whatever replica_net_timeout was", hb, err, mysql.SourceHeartbeatPeriod)
		}
	}
	primary.exec(t, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v TEXT)",
		"INSERT INTO app.t VALUES (1, 'one')")
	want := primary.status(t).GTIDExecuted
	for _, r := range []*node{r1, r2} {
		check.Must(t, r.op.WaitForGTIDSet(ctx, want, 10*time.Second))
		st := r.status(t)
		if !st.SuperReadOnly || st.Writable() {
			t.Errorf("%s: super_read_only = %v", r.srv.Addr(), st.SuperReadOnly)
		}
		rep := st.Replication
		if rep == nil || !rep.Healthy() || !rep.AutoPosition || rep.SourceHost != primary.srv.Host {
			t.Fatalf("%s: replication status %+v", r.srv.Addr(), rep)
		}
		if !st.GTIDExecuted.Contains(want) {
			t.Errorf("%s: gtid_executed %q lacks the primary's %q", r.srv.Addr(), st.GTIDExecuted, want)
		}
		var v string
		check.Must(t, r.db.QueryRowContext(ctx, "SELECT v FROM app.t WHERE id = 1").Scan(&v))
		if v != "one" {
			t.Errorf("%s: replicated row = %q", r.srv.Addr(), v)
		}
		if _, err := r.db.ExecContext(ctx, "INSERT INTO app.t VALUES (2, 'x')"); err == nil {
			t.Errorf("%s: a read-only replica accepted a write", r.srv.Addr())
		}
	}
	// Primary status: writable, no replication channel.
	if st := primary.status(t); !st.Writable() || st.Replication != nil {
		t.Errorf("primary status: writable %v, replication %+v", st.Writable(), st.Replication)
	}
	// The account requires a client certificate: TLS alone is refused.
	noCert := primary.srv.TLSConfig()
	noCert.Certificates = nil
	if err := connectWithTLS(t, primary, noCert); err == nil {
		t.Error("the replication account connected without a client certificate")
	}
	// A wait for transactions that never come times out.
	future := gtid.MustParse(want.String() + ",aaaaaaaa-0000-0000-0000-000000000001:1")
	if err := r1.op.WaitForGTIDSet(ctx, future, 200*time.Millisecond); !errors.Is(err, mysql.ErrTimeout) {
		t.Errorf("WaitForGTIDSet(unreachable) = %v, want ErrTimeout", err)
	}
}

// testErrant writes on a replica behind the operator's back; the GTID comparison flags it.
func testErrant(t *testing.T, primary, r2 *node) {
	ctx := t.Context()
	check.Must(t, r2.op.WaitForGTIDSet(ctx, primary.status(t).GTIDExecuted, 10*time.Second))
	check.Must(t, r2.op.StopReplication(ctx))
	check.Must(t, r2.op.SetReadOnly(ctx, false))
	r2.exec(t, "INSERT INTO app.t VALUES (100, 'errant')")
	check.Must(t, r2.op.SetReadOnly(ctx, true))
	p, r := primary.status(t).GTIDExecuted, r2.status(t).GTIDExecuted
	errant := gtid.Errant(r, p)
	// The primary has not moved: the replica looks "ahead", yet it must not follow.
	if errant.Count() != 1 || gtid.CanFollow(r, p) || gtid.Compare(r, p) != gtid.Ahead {
		t.Fatalf("replica %q vs primary %q: errant %q, relation %s", r, p, errant, gtid.Compare(r, p))
	}
	// Once the primary commits more, the histories have diverged both ways.
	primary.exec(t, "INSERT INTO app.t VALUES (101, 'primary moves on')")
	p = primary.status(t).GTIDExecuted
	if rel := gtid.Compare(r, p); rel != gtid.Diverged || !gtid.Errant(r, p).Equal(errant) {
		t.Fatalf("replica %q vs primary %q: relation %s, errant %q", r, p, rel, gtid.Errant(r, p))
	}
	if uuid := r2.status(t).ServerUUID; !strings.HasPrefix(errant.String(), uuid+":") {
		t.Errorf("errant set %q is not the replica's own (%s)", errant, uuid)
	}
}

func testClone(t *testing.T, primary, r2 *node) {
	ctx := t.Context()
	before := r2.status(t)
	check.Must(t, r2.op.ResetReplication(ctx))
	primary.exec(t, "INSERT INTO app.t VALUES (3, 'before clone')")
	donorSet := primary.status(t).GTIDExecuted
	begin := time.Now()
	check.Must(t, r2.op.Clone(ctx, donor(primary, r2)))
	check.Must(t, r2.srv.WaitExit(30*time.Second))
	check.Must(t, r2.srv.Restart())
	t.Logf("clone and restart took %s", time.Since(begin).Round(time.Millisecond))
	after := r2.status(t)
	if after.ServerUUID != before.ServerUUID {
		t.Errorf("server_uuid changed by the clone: %s -> %s", before.ServerUUID, after.ServerUUID)
	}
	if !after.GTIDExecuted.Contains(donorSet) || !gtid.Errant(after.GTIDExecuted, donorSet).IsEmpty() {
		t.Errorf("clone gtid_executed %q, donor had %q", after.GTIDExecuted, donorSet)
	}
	// The clone follows the primary from where the copy ended.
	check.Must(t, r2.op.SetReadOnly(ctx, true))
	check.Must(t, r2.op.ResetReplication(ctx))
	check.Must(t, r2.op.ConfigureReplication(ctx, source(primary, r2)))
	check.Must(t, r2.op.StartReplication(ctx))
	primary.exec(t, "INSERT INTO app.t VALUES (4, 'after clone')")
	check.Must(t, r2.op.WaitForGTIDSet(ctx, primary.status(t).GTIDExecuted, 10*time.Second))
	var n int
	check.Must(t, r2.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.t WHERE id IN (3, 4, 100, 101)").Scan(&n))
	if n != 3 {
		t.Errorf("cloned replica holds %d of rows 3, 4, 101 and the errant 100, want 3 (not 100)", n)
	}
}

// testSecrets makes operations that carry passwords fail and checks the errors do not carry them.
func testSecrets(t *testing.T, primary, r1 *node) {
	ctx := t.Context()
	errs := map[string]error{}
	errs["CreateUsers on a read-only server"] = r1.op.CreateUsers(ctx, testUsers)
	bad := donor(primary, r1)
	bad.Password = "wrong-" + backupPassword
	errs["Clone with a wrong password"] = r1.op.Clone(ctx, bad)
	for what, err := range errs {
		if err == nil {
			t.Errorf("%s succeeded", what)
			continue
		}
		for _, secret := range []string{replPassword, backupPassword, "S3cret"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: error carries a password: %v", what, err)
			}
		}
		t.Logf("%s: %v", what, err)
	}
	if st := r1.status(t); !st.SuperReadOnly || !st.Replication.Healthy() {
		t.Errorf("after a failed clone: super_read_only %v, replication %+v", st.SuperReadOnly, st.Replication)
	}
}
