package instancemanager

import (
	"cmp"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instance"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// world is the running cluster the ordered steps share.
type world struct {
	// start restarts a stopped node's manager.
	start func(*testing.T, *node)
	env   *kubetest.Env
	// kubeconfig reaches env's API server directly (a node's own kubeconfig may replace it).
	kubeconfig string
	key        types.NamespacedName
	nodes      map[string]*node
	operator   *instanceclient.Client
	pki        pki
}

// TestInstanceManagers runs three `manager instance run` processes, each with its own mysqld,
// against the real API server. The Cluster controller does not run: the test plays the
// operator's part (status.targetPrimary, the semi-sync count over the control API).
func TestInstanceManagers(t *testing.T) {
	w := startWorld(t)
	steps := []step[*world]{
		{"three instances come up: a primary and two replicas by clone", testComeUp},
		{"writes on the primary reach both replicas, acknowledged by semi-sync", testWritesReplicate},
		{"each instance serves its metrics to the token or a CA certificate, to no one else", testMetricsServed},
		{"maxSyncReplicas 1: once told, one replica of two acknowledges", testMaxSyncReplicas},
		{"editing targetPrimary converges to the new primary", testSwitchover},
		{"a crashed mysqld is restarted by its manager", testCrashRestart},
		{"preferred lowers the count while a replica is down, required keeps it and falls back to async", testDurability},
		{"an instance with an errant transaction is reported diverged, not re-cloned", testDiverged},
		{"the primary releases its Lease at shutdown, read-only before mysqld stops", testShutdownReleasesLease},
	}
	runSteps(t, w, steps, nil)
}

func startWorld(t *testing.T) *world { return startWorldWith(t, nil) }

// startWorldWith is startWorld with the Cluster changed by mutate before it is created.
func startWorldWith(t *testing.T, mutate func(*v1alpha1.Cluster)) *world {
	return newWorld(t, worldOptions{cluster: mutate})
}

// worldOptions say how a world differs from startWorld's: three instances of a Cluster with
// semi-sync, every manager started, an operator client with a 5 s timeout.
type worldOptions struct {
	// cluster changes the Cluster before it is created.
	cluster func(*v1alpha1.Cluster)
	// instances is the number of nodes (3 when 0), named db-1, db-2...
	instances int
	// firstHost is the last byte of the loopback address before db-1's, less the pid's share
	// (20 when 0): worlds of one test binary on different addresses.
	firstHost int
	// startNone leaves every manager stopped: the caller starts them with w.start.
	startNone bool
	// operatorTimeout is the operator client's (5 s when 0).
	operatorTimeout time.Duration
}

// newWorld starts an API server, creates the Cluster db with status.targetPrimary db-1, and
// prepares the nodes (and starts their managers unless o.startNone).
func newWorld(t *testing.T, o worldOptions) *world {
	instances, firstHost, timeout := cmp.Or(o.instances, 3), cmp.Or(o.firstHost, 20), cmp.Or(o.operatorTimeout, 5*time.Second)
	env := kubetest.StartT(t, kubetest.Options{})
	bin := buildManager(t)
	rootfs, base := rootFS(t)
	p := newPKI(t)
	ns := env.NewNamespace(t)
	cluster := &v1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec: v1alpha1.ClusterSpec{Instances: int32(instances), MinSyncReplicas: 1, MaxSyncReplicas: 2, MaxSwitchoverDelay: 60,
			Storage: v1alpha1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			MySQL: v1alpha1.MySQLConfiguration{SemiSync: &v1alpha1.SemiSyncConfiguration{
				Enabled: true, TimeoutMillis: 2000, DataDurability: v1alpha1.DataDurabilityPreferred}}},
	}
	if o.cluster != nil {
		o.cluster(cluster)
	}
	must(t, env.Client.Create(t.Context(), cluster))
	w := &world{env: env, key: types.NamespacedName{Namespace: ns, Name: "db"}, nodes: map[string]*node{},
		kubeconfig: env.KubeconfigFile(t), pki: p}
	w.setTarget(t, "db-1")
	first := firstHost + syscall.Getpid()%200
	var all []*node
	for i := 1; i <= instances; i++ {
		n := newNode(t, p, base, "db-"+strconv.Itoa(i), net.IPv4(127, 0, 0, byte(first+i)).String())
		w.nodes[n.name] = n
		all = append(all, n)
	}
	w.start = func(t *testing.T, n *node) { n.start(t, bin, rootfs, w.kubeconfig, ns, all) }
	if !o.startNone {
		for _, n := range all {
			w.start(t, n)
		}
	}
	cfg := must1(instanceclient.TLSConfig(p.ca.CertPEM, p.operator.CertPEM, p.operator.KeyPEM))(t)
	w.operator = instanceclient.New(cfg, timeout)
	return w
}

// setTarget writes status.targetPrimary as the operator would.
func (w *world) setTarget(t *testing.T, target string) {
	t.Helper()
	eventually(t, 10*time.Second, "targetPrimary written", func() bool {
		var c v1alpha1.Cluster
		if err := w.env.Client.Get(t.Context(), w.key, &c); err != nil {
			return false
		}
		now := metav1.Now()
		c.Status.TargetPrimary, c.Status.TargetPrimaryTimestamp = target, &now
		return w.env.Client.Status().Update(t.Context(), &c) == nil
	})
}

// setTargetRecording names target as the target primary and, as the operator does for a target
// that cannot read the old primary, records what it must execute first (catchUp, MySQL's text
// form) for that primary change.
func (w *world) setTargetRecording(t *testing.T, target, catchUp string) {
	t.Helper()
	eventually(t, 10*time.Second, "targetPrimary and its catch-up written", func() bool {
		var c v1alpha1.Cluster
		if err := w.env.Client.Get(t.Context(), w.key, &c); err != nil {
			return false
		}
		now := metav1.Now()
		c.Status.TargetPrimary, c.Status.TargetPrimaryTimestamp = target, &now
		c.Status.TargetPrimaryCatchUp = &v1alpha1.PrimaryCatchUp{Instance: target, GTIDSet: catchUp, TargetPrimaryTimestamp: &now}
		return w.env.Client.Status().Update(t.Context(), &c) == nil
	})
}

func (w *world) cluster(t *testing.T) *v1alpha1.Cluster {
	t.Helper()
	var c v1alpha1.Cluster
	must(t, w.env.Client.Get(t.Context(), w.key, &c))
	return &c
}

// waitRoles waits until primary is recorded, writable and ready, and each replica is read-only,
// replicates healthily from it with everything it executed, and is ready.
func (w *world) waitRoles(t *testing.T, timeout time.Duration, primary string, replicas ...string) {
	t.Helper()
	p := w.nodes[primary]
	eventually(t, timeout, primary+" primary with replicas "+joinNames(replicas), func() bool {
		if w.cluster(t).Status.CurrentPrimary != primary {
			return false
		}
		pst := p.status(t)
		if pst == nil || !pst.Writable() || p.probe("/readyz") != 200 {
			return false
		}
		for _, r := range replicas {
			n := w.nodes[r]
			st := n.status(t)
			if st == nil || st.Writable() || st.Replication == nil || !st.Replication.Healthy() ||
				(st.Replication.SourcePort != p.mysqlPort && st.Replication.SourcePort != n.peerMySQLPorts[primary]) ||
				!st.GTIDExecuted.Contains(pst.GTIDExecuted) || n.probe("/readyz") != 200 {
				return false
			}
		}
		return true
	})
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

func testComeUp(t *testing.T, w *world) {
	begin := time.Now()
	w.waitRoles(t, 120*time.Second, "db-1", "db-2", "db-3")
	t.Logf("three instances ready %s after the managers started", time.Since(begin).Round(time.Millisecond))
	w.waitLeaseHeld(t, "db-1")
	p := w.nodes["db-1"].status(t)
	for _, r := range []string{"db-2", "db-3"} {
		if st := w.nodes[r].status(t); st.ServerUUID == p.ServerUUID {
			t.Errorf("%s has the primary's server_uuid: a copy of the data directory, not a clone", r)
		}
	}
	for _, r := range []string{"db-2", "db-3"} {
		if _, err := os.Stat(filepath.Join(w.nodes[r].dir, "data", ".cnm-clone-pending")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: the clone-pending marker is still there after the clone (%v)", r, err)
		}
		log, _ := os.ReadFile(filepath.Join(w.nodes[r].dir, "manager.log"))
		t.Logf("%s: the clone kept its pending marker until the manager cleared it: %v", r,
			!strings.Contains(string(log), "the clone removed its pending marker"))
	}
	var n int
	must(t, w.nodes["db-1"].db.QueryRowContext(t.Context(),
		"SELECT COUNT(*) FROM mysql.user WHERE user IN ('replication', 'backup') AND ssl_type = 'SPECIFIED' "+
			"AND CAST(x509_subject AS CHAR) = '/CN=replication'").Scan(&n))
	if n != 2 {
		t.Errorf("%d of the replication and backup accounts require the subject /CN=replication, want both", n)
	}
}

// applySemiSyncPlan plays the operator: replicas' health from their control API, the plan,
// the count applied on the primary.
func (w *world) applySemiSyncPlan(t *testing.T, primary string) semisync.Plan {
	t.Helper()
	c := w.cluster(t)
	var health []semisync.ReplicaHealth
	for name, n := range w.nodes {
		if name == primary {
			continue
		}
		st, err := w.operator.Status(t.Context(), n.target())
		healthy := err == nil && st.Replication != nil && st.Replication.IORunning && st.Replication.SQLRunning && st.Replication.LastError == ""
		health = append(health, semisync.ReplicaHealth{Name: name, Healthy: healthy})
	}
	plan := semisync.PlanFor(&c.Spec, health)
	must(t, w.operator.SetSemiSync(t.Context(), w.nodes[primary].target(),
		instanceclient.SemiSyncRequest{WaitForReplicaCount: int32(plan.WaitForReplicaCount)}))
	return plan
}

func testWritesReplicate(t *testing.T, w *world) {
	p := w.nodes["db-1"]
	plan := w.applySemiSyncPlan(t, "db-1")
	eventually(t, 10*time.Second, "two semi-sync replicas connected", func() bool {
		st := p.status(t)
		return st != nil && st.SemiSync.SourceEnabled && st.SemiSync.Clients == 2
	})
	before := p.status(t).SemiSync
	begin := time.Now()
	p.exec(t, "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1)")
	t.Logf("two acknowledged commits took %s (count %d)", time.Since(begin).Round(time.Millisecond), plan.WaitForReplicaCount)
	after := p.status(t).SemiSync
	if after.YesTx < before.YesTx+2 || after.NoTx != before.NoTx || !after.SourceActive {
		t.Errorf("semi-sync: yes_tx %d -> %d, no_tx %d -> %d, active %v; want 2 acknowledged commits",
			before.YesTx, after.YesTx, before.NoTx, after.NoTx, after.SourceActive)
	}
	report, err := w.operator.Status(t.Context(), p.target())
	if err != nil || report.SemiSync == nil || !report.SemiSync.Active || report.SemiSync.WaitForReplicaCount != int32(plan.WaitForReplicaCount) {
		t.Errorf("the control API reports %+v, %v", report, err)
	}
	w.waitRoles(t, 10*time.Second, "db-1", "db-2", "db-3")
	for _, r := range []string{"db-2", "db-3"} {
		var n int
		must(t, w.nodes[r].db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM app.t").Scan(&n))
		if n != 1 {
			t.Errorf("%s holds %d rows, want 1", r, n)
		}
	}
}

func testSwitchover(t *testing.T, w *world) {
	before := w.lease(t)
	begin := time.Now()
	w.setTarget(t, "db-2")
	w.waitRoles(t, 30*time.Second, "db-2", "db-1", "db-3")
	took := time.Since(begin)
	t.Logf("switchover converged %s after targetPrimary changed", took.Round(time.Millisecond))
	// The old primary deleted its Lease once read-only, and the new one created its own: a Lease
	// taken over after expiring would keep its UID, and the switchover would have taken a TTL.
	after := w.waitLeaseHeld(t, "db-2")
	if after.UID == before.UID || took >= instance.LeaseTTL {
		t.Errorf("the Lease was not released on demotion: UID %s -> %s, switchover %s", before.UID, after.UID, took)
	}
	c := w.cluster(t)
	if c.Status.CurrentPrimaryTimestamp == nil || c.Status.CurrentPrimaryTimestamp.Before(c.Status.TargetPrimaryTimestamp) {
		t.Errorf("currentPrimaryTimestamp %v before targetPrimaryTimestamp %v", c.Status.CurrentPrimaryTimestamp, c.Status.TargetPrimaryTimestamp)
	}
	w.applySemiSyncPlan(t, "db-2")
	w.nodes["db-2"].exec(t, "INSERT INTO app.t VALUES (2)")
	w.waitRoles(t, 10*time.Second, "db-2", "db-1", "db-3")
}

func testCrashRestart(t *testing.T, w *world) {
	n := w.nodes["db-3"]
	pid := n.mysqldPID(t)
	if pid == 0 {
		t.Fatal("no mysqld pid file")
	}
	must(t, syscall.Kill(pid, syscall.SIGKILL))
	begin := time.Now()
	eventually(t, 60*time.Second, "mysqld restarted", func() bool {
		p := n.mysqldPID(t)
		return p != 0 && p != pid && n.status(t) != nil
	})
	t.Logf("mysqld answering again %s after SIGKILL", time.Since(begin).Round(time.Millisecond))
	w.nodes["db-2"].exec(t, "INSERT INTO app.t VALUES (3)")
	w.waitRoles(t, 30*time.Second, "db-2", "db-1", "db-3")
}

func testDiverged(t *testing.T, w *world) {
	n := w.nodes["db-3"]
	uuid := n.status(t).ServerUUID
	n.errantWrite(t)
	eventually(t, 30*time.Second, "db-3 listed in status.divergedInstances", func() bool {
		return slices.Contains(w.cluster(t).Status.DivergedInstances, "db-3")
	})
	st := n.status(t)
	if st == nil || st.Writable() || st.Replication == nil || st.Replication.IORunning != "No" || st.Replication.SQLRunning != "No" {
		t.Fatalf("diverged db-3: %+v; want read-only with replication stopped", st)
	}
	var rows int
	must(t, n.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM app.t WHERE id = 100").Scan(&rows))
	if rows != 1 || st.ServerUUID != uuid {
		t.Errorf("db-3's data was replaced: errant row %d, uuid %s (was %s)", rows, st.ServerUUID, uuid)
	}
	if code := n.probe("/readyz"); code == 200 {
		t.Error("a diverged instance reports ready")
	}
}
