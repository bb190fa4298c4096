package instance

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// memberPeers resolves the test members for the reconcilers.
type memberPeers map[string]*member

func (p memberPeers) InstanceAt(host string, port int) string {
	for name, m := range p {
		if m.srv.Host == host && m.srv.Port == port {
			return name
		}
	}
	return ""
}

func (p memberPeers) State(ctx context.Context, instance string) (PeerState, error) {
	st, err := p[instance].op.Status(ctx)
	if err != nil {
		return PeerState{}, err
	}
	return PeerState{Executed: st.GTIDExecuted, InFlight: st.GTIDInFlight, Writable: st.Writable()}, nil
}

// TestRoleReconcilerFollowsTheCluster runs two role reconcilers against the real API server and
// two real servers: the instance named by status.targetPrimary promotes itself and records
// status.currentPrimary, the other follows it; editing targetPrimary switches the roles over.
func TestRoleReconcilerFollowsTheCluster(t *testing.T) {
	env, m, cluster := startRoleWorld(t, func(*v1alpha1.ClusterSpec) {})
	ns := cluster.Namespace
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	isolation := NewIsolationDetector(clock.RealClock{}, 5*time.Second)
	isolation.Arm()
	for name, mem := range m {
		r := &RoleReconciler{Client: env.Client, Cluster: types.NamespacedName{Namespace: ns, Name: "db"}, Instance: name,
			Actor: mem.actor, Peers: memberPeers(m), Clock: clock.RealClock{}, Log: testr.New(t).WithValues("instance", name),
			Isolation: isolation}
		wg.Go(func() { r.Run(ctx, 200*time.Millisecond) })
	}

	waitPrimary(t, env, cluster, m, "c-1")
	must(t, m["c-1"].op.CreateUsers(t.Context(), roleTestUsers)) // bootstrap's job, once primary
	m["c-1"].exec(t, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1)")
	waitFollowing(t, m, "c-1", "c-2")

	begin := time.Now()
	setTarget(t, env, cluster, "c-2")
	waitPrimary(t, env, cluster, m, "c-2")
	waitFollowing(t, m, "c-2", "c-1")
	t.Logf("switchover converged in %s after targetPrimary changed", time.Since(begin).Round(time.Millisecond))
	m["c-2"].exec(t, "INSERT INTO app.t VALUES (2)")
	waitFollowing(t, m, "c-2", "c-1")
	if isolation.Isolated() {
		t.Error("isolated although the reconcilers read the Cluster")
	}
}

// startRoleWorld starts the API server and two read-only servers c-1 and c-2, and creates the
// Cluster db of two instances (spec adjusted by edit) with c-1 as its target primary.
func startRoleWorld(t *testing.T, edit func(*v1alpha1.ClusterSpec)) (*kubetest.Env, map[string]*member, *v1alpha1.Cluster) {
	t.Helper()
	env := kubetest.StartT(t, kubetest.Options{})
	m := startMembers(t, "c-1", "c-2")
	cluster := &v1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: env.NewNamespace(t)},
		Spec: v1alpha1.ClusterSpec{Instances: 2, MaxSwitchoverDelay: 60,
			Storage: v1alpha1.StorageConfiguration{Size: resource.MustParse("1Gi")}},
	}
	edit(&cluster.Spec)
	must(t, env.Client.Create(t.Context(), cluster))
	setTarget(t, env, cluster, "c-1")
	for _, mem := range m {
		must(t, mem.op.SetReadOnly(t.Context(), true))
	}
	return env, m, cluster
}

// setTarget writes status.targetPrimary as the operator would.
func setTarget(t *testing.T, env *kubetest.Env, cluster *v1alpha1.Cluster, target string) {
	t.Helper()
	eventually(t, 10*time.Second, func() bool {
		if err := env.Client.Get(t.Context(), types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Name}, cluster); err != nil {
			return false
		}
		now := metav1.Now()
		cluster.Status.TargetPrimary, cluster.Status.TargetPrimaryTimestamp = target, &now
		return env.Client.Status().Update(t.Context(), cluster) == nil
	})
}

// waitPrimary waits until primary is recorded as currentPrimary and writable, and every other
// member is read-only.
func waitPrimary(t *testing.T, env *kubetest.Env, cluster *v1alpha1.Cluster, m map[string]*member, primary string) {
	t.Helper()
	eventually(t, 30*time.Second, func() bool {
		var c v1alpha1.Cluster
		if err := env.Client.Get(t.Context(), types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Name}, &c); err != nil {
			return false
		}
		if c.Status.CurrentPrimary != primary || c.Status.CurrentPrimaryTimestamp == nil || !m[primary].writable(t) {
			return false
		}
		for name, mem := range m {
			if name != primary && mem.writable(t) {
				t.Fatalf("%s writable while %s is the primary", name, primary)
			}
		}
		return true
	})
}

// waitFollowing waits until the replica replicates healthily from primary and has applied all
// the primary executed.
func waitFollowing(t *testing.T, m map[string]*member, primary, replica string) {
	t.Helper()
	eventually(t, 30*time.Second, func() bool {
		st, err := m[replica].op.Status(t.Context())
		return err == nil && st.Replication != nil && st.Replication.Healthy() &&
			st.Replication.SourcePort == m[primary].srv.Port && st.GTIDExecuted.Contains(m[primary].gtidSet(t))
	})
}

// unansweringPeers fails every call, as a primary cut off from the network does once the
// caller's timeout passes; it records how long each call was given.
type unansweringPeers struct {
	answer bool
	given  []time.Duration
}

func (p *unansweringPeers) InstanceAt(string, int) string { return "" }

func (p *unansweringPeers) State(ctx context.Context, _ string) (PeerState, error) {
	deadline, _ := ctx.Deadline()
	p.given = append(p.given, time.Until(deadline))
	if p.answer {
		return PeerState{}, nil
	}
	return PeerState{}, context.DeadlineExceeded
}

// TestAskPrimary: how long a role reconciler pass waits for the primary's state.
func TestAskPrimary(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	peers := &unansweringPeers{}
	r := &RoleReconciler{Peers: peers}
	long := func(d time.Duration) bool { return d > PeerSuspectTimeout }
	for _, tc := range []struct {
		name   string
		target bool
		answer bool
		long   bool
	}{
		{"a primary that answered (or was never asked) is given the full timeout", false, false, true},
		{"a replica asks a primary that did not answer its last call with PeerSuspectTimeout", false, false, false},
		{"the target always gives the old primary the full timeout (a switchover needs its final GTID set)", true, false, true},
		{"still suspect: short again, and this time it answers", false, true, false},
		{"answered: trusted again, the full timeout", false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peers.answer = tc.answer
			_, _ = r.askPrimary(ctx, "c-1", tc.target)
			if got := peers.given[len(peers.given)-1]; long(got) != tc.long {
				t.Errorf("the call was given %s; want longer than %s: %v", got, PeerSuspectTimeout, tc.long)
			}
		})
	}
}

// TestFormerPrimaryAcknowledgesTheCommitTheNewPrimaryWaitsOn: after a switchover with semi-sync
// (one acknowledgement required, a long timeout), the first commit on the new primary waits for
// a replica. The former primary, whose replica side of semi-sync was off, must connect to the new
// primary as a semi-sync replica: connected without it first, it receives that commit without
// acknowledging it, and the commit waits until a later one is acknowledged (5 s of write
// unavailability seen on the local node after switchovers).
func TestFormerPrimaryAcknowledgesTheCommitTheNewPrimaryWaitsOn(t *testing.T) {
	env, m, cluster := startRoleWorld(t, func(s *v1alpha1.ClusterSpec) {
		s.MinSyncReplicas, s.MaxSyncReplicas = 1, 1
		s.MySQL.SemiSync = &v1alpha1.SemiSyncConfiguration{Enabled: true, TimeoutMillis: 60000, DataDurability: v1alpha1.DataDurabilityRequired}
	})
	ns := cluster.Namespace
	r := map[string]*RoleReconciler{}
	for name, mem := range m {
		r[name] = &RoleReconciler{Client: env.Client, Cluster: types.NamespacedName{Namespace: ns, Name: "db"}, Instance: name,
			Actor: mem.actor, Peers: memberPeers(m), Clock: clock.RealClock{}, Log: testr.New(t).WithValues("instance", name),
			ManageSemiSync: true}
	}
	// The accounts, binary-logged before semi-sync is on, so that c-2 gets them by replication
	// (these servers are not clones of one another, as an instance manager's replicas are).
	m["c-1"].exec(t, "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF")
	must(t, m["c-1"].op.CreateUsers(t.Context(), roleTestUsers))
	// pass runs one pass of the named reconciler; a failed pass is retried by the next one, as Run does.
	pass := func(name string) {
		if _, err := r[name].ReconcileOnce(t.Context()); err != nil {
			t.Logf("%s: %v", name, err)
		}
	}
	eventually(t, 30*time.Second, func() bool { pass("c-1"); return m["c-1"].writable(t) })
	pass("c-1") // records the primary and converges semi-sync
	eventually(t, 30*time.Second, func() bool {
		pass("c-2")
		st, err := m["c-2"].op.Status(t.Context())
		return err == nil && st.Replication != nil && st.Replication.Healthy() && st.SemiSync.ReplicaEnabled
	})
	m["c-1"].exec(t, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1)")
	waitFollowing(t, m, "c-1", "c-2")

	// The switchover: c-1 turns read-only, c-2 promotes itself; c-1 does not repoint yet.
	setTarget(t, env, cluster, "c-2")
	pass("c-1")
	eventually(t, 30*time.Second, func() bool {
		pass("c-2")
		var c v1alpha1.Cluster
		return env.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "db"}, &c) == nil &&
			c.Status.CurrentPrimary == "c-2" && m["c-2"].writable(t)
	})
	pass("c-2") // converges semi-sync as the primary, if the recording pass did not
	st, err := m["c-2"].op.Status(t.Context())
	must(t, err)
	if !st.SemiSync.SourceEnabled {
		t.Fatalf("c-2 is primary without the semi-sync source side: %+v", st.SemiSync)
	}

	// The first commit on c-2 waits for an acknowledgement: no replica is connected.
	done := make(chan error, 1)
	go func() {
		_, err := m["c-2"].db.ExecContext(t.Context(), "INSERT INTO app.t VALUES (2)")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the commit on c-2 returned (%v) before any replica was connected", err)
	case <-time.After(500 * time.Millisecond):
	}
	pass("c-1") // follows c-2
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(5 * time.Second):
		diag := func(name, q string) string {
			rows, err := m[name].db.QueryContext(t.Context(), q)
			if err != nil {
				return err.Error()
			}
			defer rows.Close()
			out := ""
			for rows.Next() {
				var k, v string
				_ = rows.Scan(&k, &v)
				out += k + "=" + v + " "
			}
			return out
		}
		t.Logf("c-2: %s", diag("c-2", "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_source%'"))
		t.Logf("c-1: %s", diag("c-1", "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_replica%'"))
		t.Logf("c-1: %s", diag("c-1", "SELECT 'executed', @@gtid_executed"))
		t.Logf("c-2: %s", diag("c-2", "SELECT 'executed', @@gtid_executed"))
		if st, err := m["c-1"].op.Status(t.Context()); err == nil {
			t.Logf("c-1 replication: %+v", st.Replication)
		}
		t.Fatal("the commit on c-2 was not acknowledged within 5 s of the former primary following it")
	}
	waitFollowing(t, m, "c-2", "c-1")
}
