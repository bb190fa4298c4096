package instancemanager

import (
	"context"
	"database/sql"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instance"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/cutproxy"
)

// isolationLimit is short here, so that a clone outlasts it and an isolation shows quickly.
const isolationLimit = 2 * time.Second

// cutWorld is two instances whose paths can be cut for real: each manager reaches the API
// server through its own proxy, and each reaches the other's control API through a proxy.
type cutWorld struct {
	*world
	api         map[string]*cutproxy.Proxy // per instance, in front of the API server
	db2ToDB1API *cutproxy.Proxy
	db1ToDB2API *cutproxy.Proxy
	// top is the whole test's T: a manager started in a step must outlive the step.
	top *testing.T
}

// TestLeaseFencingAndIsolation runs two `manager instance run` processes against the real API
// server, each through a TCP proxy the test cuts, with the test playing the operator.
func TestLeaseFencingAndIsolation(t *testing.T) {
	w := startCutWorld(t)
	steps := []step[*cutWorld]{
		{"a clone longer than the isolation limit completes; liveness never fails during it", testLongCloneStaysLive},
		{"a primary cut from the API server turns read-only before its Lease can expire and open sessions cannot commit", testCutPrimarySelfFences},
		{"once the API server is back the primary renews its Lease and accepts writes again", testPrimaryRecovers},
		{"a switchover target that cannot reach the old primary waits for the old primary's Lease to expire", testSwitchoverWaitsForLease},
		{"an instance that reaches neither the API server nor a peer fails liveness", testIsolatedFailsLiveness},
		{"with enablePrimaryLease false there is no Lease, and a target that cannot reach the old primary waits for its Pod to be gone", testLeaseDisabled},
	}
	runSteps(t, w, steps, nil)
}

func startCutWorld(t *testing.T) *cutWorld {
	w := &cutWorld{world: newWorld(t, worldOptions{instances: 2, firstHost: 24, startNone: true, operatorTimeout: 2 * time.Second,
		cluster: func(c *v1alpha1.Cluster) {
			c.Spec.MinSyncReplicas, c.Spec.MaxSyncReplicas, c.Spec.MySQL.SemiSync = 0, 0, nil
		}}),
		api: map[string]*cutproxy.Proxy{}, top: t}
	apiServer := must1(url.Parse(w.env.Config.Host))(t).Host
	for _, n := range w.nodes {
		w.api[n.name] = cutproxy.Start(t, "127.0.0.1:0", apiServer)
		n.kubeconfig = proxiedKubeconfig(t, w.kubeconfig, w.api[n.name].Addr())
		n.args = []string{"--isolation-limit", isolationLimit.String()}
	}
	db1, db2 := w.nodes["db-1"], w.nodes["db-2"]
	w.db2ToDB1API = cutproxy.Start(t, net.JoinHostPort(db1.host, "0"), net.JoinHostPort(db1.host, strconv.Itoa(db1.apiPort)))
	_, port, _ := net.SplitHostPort(w.db2ToDB1API.Addr())
	db2.peerAPIPorts = map[string]int{"db-1": must1(strconv.Atoi(port))(t)}
	w.db1ToDB2API = cutproxy.Start(t, net.JoinHostPort(db2.host, "0"), net.JoinHostPort(db2.host, strconv.Itoa(db2.apiPort)))
	_, port, _ = net.SplitHostPort(w.db1ToDB2API.Addr())
	db1.peerAPIPorts = map[string]int{"db-2": must1(strconv.Atoi(port))(t)}
	w.start(t, db1)
	w.waitRoles(t, 60*time.Second, "db-1")
	w.waitLeaseHeld(t, "db-1")
	// The database app and its owner app (password app-pw) exist since bootstrap.
	db1.exec(t, "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1)")
	return w
}

// proxiedKubeconfig writes a copy of kubeconfig whose API server is reached at addr.
func proxiedKubeconfig(t *testing.T, kubeconfig, addr string) string {
	cfg := must1(clientcmd.LoadFromFile(kubeconfig))(t)
	for _, c := range cfg.Clusters {
		c.Server = "https://" + addr
	}
	out := filepath.Join(t.TempDir(), "kubeconfig")
	must(t, clientcmd.WriteToFile(*cfg, out))
	return out
}

// appDB opens a client's connection pool to n as the application user, over TLS.
func appDB(t *testing.T, n *node) *sql.DB {
	cfg := driver.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.TLSConfig = "app", "app-pw", "tcp",
		net.JoinHostPort(n.host, strconv.Itoa(n.mysqlPort)), "skip-verify"
	db := must1(sql.Open("mysql", cfg.FormatDSN()))(t)
	t.Cleanup(func() { db.Close() })
	return db
}

// watchLiveness polls n's liveness until stop is closed and reports how often it failed.
func watchLiveness(n *node, stop <-chan struct{}) <-chan int {
	out := make(chan int, 1)
	go func() {
		failed := 0
		for {
			select {
			case <-stop:
				out <- failed
				return
			case <-time.After(100 * time.Millisecond):
			}
			if n.probe("/healthz") == 503 {
				failed++
			}
		}
	}()
	return out
}

func testLongCloneStaysLive(t *testing.T, w *cutWorld) {
	db2 := w.nodes["db-2"]
	stop := make(chan struct{})
	liveness := watchLiveness(db2, stop)
	w.start(w.top, db2)
	var sawBootstrapping, bootstrapped time.Time
	eventually(t, 120*time.Second, "db-2 bootstrapped by clone", func() bool {
		st, err := w.operator.Status(t.Context(), db2.target())
		switch {
		case err != nil:
		case st.Bootstrapping && sawBootstrapping.IsZero():
			sawBootstrapping = time.Now()
		case !st.Bootstrapping && !sawBootstrapping.IsZero():
			bootstrapped = time.Now()
			return true
		}
		return false
	})
	w.waitRoles(t, 30*time.Second, "db-1", "db-2")
	close(stop)
	took := bootstrapped.Sub(sawBootstrapping)
	t.Logf("db-2 reported bootstrapping for %s (isolation limit %s)", took.Round(time.Millisecond), isolationLimit)
	if took <= isolationLimit {
		t.Fatalf("the clone took %s, not longer than the isolation limit %s: this proves nothing", took, isolationLimit)
	}
	if failed := <-liveness; failed > 0 {
		t.Errorf("db-2's liveness failed %d times during its bootstrap", failed)
	}
}

// testCutPrimarySelfFences cuts both managers from the API server: the primary turns read-only
// before its Lease's TTL has passed since its last renewal, a transaction open before can no
// longer commit, and both instances stay live (they reach each other); the replica keeps serving
// reads and stays ready.
func testCutPrimarySelfFences(t *testing.T, w *cutWorld) {
	db1, db2 := w.nodes["db-1"], w.nodes["db-2"]
	app := appDB(t, db1)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	tx := must1(app.BeginTx(ctx, nil))(t)
	_, err := tx.ExecContext(ctx, "INSERT INTO app.t VALUES (2)")
	must(t, err)
	idle := must1(app.Conn(ctx))(t)
	defer idle.Close()
	must(t, idle.PingContext(ctx))

	stop := make(chan struct{})
	live1, live2 := watchLiveness(db1, stop), watchLiveness(db2, stop)
	cut := time.Now()
	w.api["db-1"].Cut()
	w.api["db-2"].Cut()
	var readOnly time.Time
	eventually(t, instance.LeaseTTL+5*time.Second, "db-1 read-only", func() bool {
		st := db1.status(t)
		if st != nil && st.SuperReadOnly {
			readOnly = time.Now()
			return true
		}
		return false
	})
	last := renewTime(w.lease(t)) // the test's own client is not cut
	t.Logf("db-1 read-only %s after the cut, %s after its last renewal (TTL %s)",
		readOnly.Sub(cut).Round(time.Millisecond), readOnly.Sub(last).Round(time.Millisecond), instance.LeaseTTL)
	if !readOnly.Before(last.Add(instance.LeaseTTL)) {
		t.Errorf("db-1 turned read-only %s after its last renewal, not before the TTL %s", readOnly.Sub(last), instance.LeaseTTL)
	}
	if err := tx.Commit(); err == nil {
		t.Error("a transaction opened before the cut committed after the primary turned read-only")
	}
	if _, err := idle.ExecContext(ctx, "INSERT INTO app.t VALUES (3)"); err == nil {
		t.Error("a session opened before the cut still writes")
	}
	if _, err := app.ExecContext(ctx, "INSERT INTO app.t VALUES (4)"); err == nil {
		t.Error("a new session writes on the self-fenced primary")
	}
	report, err := w.operator.Status(ctx, db1.target())
	if err != nil || !report.SuperReadOnly || report.LeaseHeld {
		t.Errorf("db-1 reports %+v, %v; want super_read_only and no Lease", report, err)
	}
	time.Sleep(2 * isolationLimit) // an API server outage longer than the isolation limit
	var rows int
	must(t, db2.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.t").Scan(&rows))
	if rows != 1 || db2.probe("/readyz") != 200 {
		t.Errorf("replica during the outage: %d rows, ready %d; want it serving reads", rows, db2.probe("/readyz"))
	}
	close(stop)
	if f1, f2 := <-live1, <-live2; f1+f2 > 0 {
		t.Errorf("liveness failed during an API server outage while the instances reach each other: db-1 %d, db-2 %d times", f1, f2)
	}
}

func testPrimaryRecovers(t *testing.T, w *cutWorld) {
	before := w.lease(t)
	begin := time.Now()
	w.api["db-1"].Restore()
	w.api["db-2"].Restore()
	w.waitRoles(t, 30*time.Second, "db-1", "db-2")
	t.Logf("db-1 writable again %s after the API server came back", time.Since(begin).Round(time.Millisecond))
	after := w.waitLeaseHeld(t, "db-1")
	if !renewTime(after).After(renewTime(before)) {
		t.Errorf("the Lease was not renewed: %v -> %v", renewTime(before), renewTime(after))
	}
	w.nodes["db-1"].exec(t, "INSERT INTO app.t VALUES (5)")
	w.waitRoles(t, 10*time.Second, "db-1", "db-2")
}

// testSwitchoverWaitsForLease: the old primary is cut from the API server (it never learns of
// the switchover) and the target cannot reach its control API. The target must not promote on
// "unreachable": it waits until the old primary's Lease has expired, and the old primary has
// turned itself read-only before that.
func testSwitchoverWaitsForLease(t *testing.T, w *cutWorld) {
	db1, db2 := w.nodes["db-1"], w.nodes["db-2"]
	final := db1.status(t)
	if final == nil {
		t.Fatal("db-1 does not answer before the cut")
	}
	w.api["db-1"].Cut()
	w.db2ToDB1API.Cut()
	begin := time.Now()
	// db-2 cannot read db-1: it promotes once db-1's Lease is free and the set recorded for it
	// (db-1's, as the operator would record it) is executed.
	w.setTargetRecording(t, "db-2", final.GTIDExecuted.String())
	var lastByDB1, db1ReadOnly, db2Writable time.Time
	transitions := ptr.Deref(w.lease(t).Spec.LeaseTransitions, 0)
	eventually(t, 2*instance.LeaseTTL+10*time.Second, "db-2 writable", func() bool {
		if l := w.lease(t); holder(l) == "db-1" {
			lastByDB1 = renewTime(l)
		}
		s1, s2 := db1.status(t), db2.status(t)
		if s1 != nil && s2 != nil && s1.Writable() && s2.Writable() {
			t.Fatal("db-1 and db-2 both writable")
		}
		now := time.Now()
		if db1ReadOnly.IsZero() && s1 != nil && !s1.Writable() {
			db1ReadOnly = now
		}
		if s2 != nil && s2.Writable() {
			db2Writable = now
			return true
		}
		return false
	})
	t.Logf("targetPrimary set; db-1 read-only after %s, db-2 writable after %s; db-1's last renewal + TTL at %s",
		db1ReadOnly.Sub(begin).Round(time.Millisecond), db2Writable.Sub(begin).Round(time.Millisecond),
		lastByDB1.Add(instance.LeaseTTL).Sub(begin).Round(time.Millisecond))
	if db1ReadOnly.IsZero() || !db1ReadOnly.Before(db2Writable) {
		t.Errorf("db-1 not seen read-only before db-2 became writable")
	}
	if lastByDB1.IsZero() || db2Writable.Before(lastByDB1.Add(instance.LeaseTTL)) {
		t.Errorf("db-2 writable at %s, before db-1's Lease expired (last renewal %s + %s)", db2Writable, lastByDB1, instance.LeaseTTL)
	}
	l := w.lease(t)
	if holder(l) != "db-2" || ptr.Deref(l.Spec.LeaseTransitions, 0) != transitions+1 {
		t.Errorf("Lease held by %q with %d transitions, want db-2 having taken it over (%d)", holder(l),
			ptr.Deref(l.Spec.LeaseTransitions, 0), transitions+1)
	}
	w.api["db-1"].Restore()
	w.db2ToDB1API.Restore()
	w.waitRoles(t, 60*time.Second, "db-2", "db-1")
	w.nodes["db-2"].exec(t, "INSERT INTO app.t VALUES (6)")
	w.waitRoles(t, 10*time.Second, "db-2", "db-1")
}

// testIsolatedFailsLiveness cuts db-2 (now the primary) from the API server and from db-1's
// control API: past the isolation limit its liveness fails; restored, it passes again.
func testIsolatedFailsLiveness(t *testing.T, w *cutWorld) {
	db2 := w.nodes["db-2"]
	w.api["db-2"].Cut()
	w.db2ToDB1API.Cut()
	begin := time.Now()
	eventually(t, isolationLimit+10*time.Second, "db-2's liveness failing", func() bool { return db2.probe("/healthz") == 503 })
	took := time.Since(begin)
	t.Logf("db-2's liveness failed %s after it lost the API server and its peer", took.Round(time.Millisecond))
	// The last contacts came before the cut, by up to one peer-watch interval (a quarter of the
	// limit): the count starts there, not at the cut.
	if took < isolationLimit-isolationLimit/4 {
		t.Errorf("liveness failed after %s, before the isolation limit %s", took, isolationLimit)
	}
	w.api["db-2"].Restore()
	w.db2ToDB1API.Restore()
	eventually(t, 10*time.Second, "db-2 live again", func() bool { return db2.probe("/healthz") == 200 })
	w.waitRoles(t, 60*time.Second, "db-2", "db-1")
}

// testLeaseDisabled turns the Lease off: the holder deletes it and nothing creates one. db-2 (the
// primary) is cut from the API server and from db-1, and targetPrimary names db-1: db-1 cannot
// see db-2 read-only and has no Lease to wait for, so it waits until db-2's Pod is gone (here a
// bare Pod object; the test stops db-2's manager as the kubelet would when deleting it).
func testLeaseDisabled(t *testing.T, w *cutWorld) {
	db1, db2 := w.nodes["db-1"], w.nodes["db-2"]
	w.updateSpec(t, func(s *v1alpha1.ClusterSpec) { s.EnablePrimaryLease = ptr.To(false) })
	eventually(t, 10*time.Second, "the Lease deleted once disabled", func() bool { return w.lease(t) == nil })
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-2", Namespace: w.key.Namespace},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysql", Image: "mysql"}}}}
	must(t, w.env.Client.Create(t.Context(), pod))
	final := db2.status(t)
	if final == nil {
		t.Fatal("db-2 does not answer before the cut")
	}
	w.api["db-2"].Cut()
	w.db1ToDB2API.Cut()
	w.setTarget(t, "db-1")
	hold := time.Now().Add(3 * time.Second) // several passes of db-1's reconciler
	for time.Now().Before(hold) {
		if st := db1.status(t); st != nil && st.Writable() {
			t.Fatal("db-1 promoted while db-2 did not answer and its Pod still existed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	must(t, w.env.Client.Delete(t.Context(), pod, client.GracePeriodSeconds(0)))
	db2.stop(t)
	// Its Pod gone, db-1 still cannot know what db-2 wrote last: it waits for the operator's
	// record of what to execute first.
	hold = time.Now().Add(3 * time.Second)
	for time.Now().Before(hold) {
		if st := db1.status(t); st != nil && st.Writable() {
			t.Fatal("db-1 promoted without the recorded set it must execute first")
		}
		time.Sleep(100 * time.Millisecond)
	}
	begin := time.Now()
	w.setTargetRecording(t, "db-1", final.GTIDExecuted.String())
	eventually(t, 30*time.Second, "db-1 writable once db-2's Pod is gone and its catch-up recorded", func() bool {
		st := db1.status(t)
		return st != nil && st.Writable()
	})
	t.Logf("db-1 writable %s after db-2's Pod was deleted", time.Since(begin).Round(time.Millisecond))
	if l := w.lease(t); l != nil {
		t.Errorf("a Lease held by %q exists although the Lease is disabled", holder(l))
	}
	w.api["db-2"].Restore()
	w.db1ToDB2API.Restore()
	w.start(w.top, db2)
	w.waitRoles(t, 60*time.Second, "db-1", "db-2")
	if l := w.lease(t); l != nil {
		t.Errorf("a Lease held by %q exists although the Lease is disabled", holder(l))
	}
}
