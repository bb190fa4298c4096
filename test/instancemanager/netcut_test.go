package instancemanager

import (
	"context"
	"database/sql"
	"net"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instance"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/cutproxy"
)

// netCutWorld is the operator world with every network path of every instance through a proxy
// the test cuts: its manager to the API server, the operator to its control API, and each other
// instance to its control API and to its mysqld (replication, clone). Cutting all the paths of
// one instance is the network cut of its Pod. The test reaches every instance directly (its
// mysqld's socket, its control API), as an observer outside the partition; the fake kubelet's
// readiness probe is not cut either, so the operator must find the cut primary through its own
// asks, the slowest way (a real kubelet marks the Pod not ready after three failed probes).
type netCutWorld struct {
	*operatorWorld
	// paths lists, by instance, every proxy that carries its traffic, in or out; peers only those
	// between it and the other instances (replication, clone, their control APIs).
	paths, peers map[string][]*cutproxy.Proxy
}

// rtoBound is what the test asserts of the time from the cut to the first write the new
// primary accepts: loosely, so that a slow machine does not fail it. The target (p99 20 s with
// the Lease expiring) is for the benchmark on the local node (bench/failover).
const rtoBound = 30 * time.Second

// TestOperatorFailoverNetworkCut: the primary, cut from the API server, the operator and its
// peers while a client on its side of the partition keeps writing, is replaced, the production
// timings in force (report interval, instance reconcile interval, failoverDelay 0, semi-sync
// required). The new primary accepts writes within rtoBound of the cut, and only after the old
// one turned itself read-only and one TTL after its last renewal; no acknowledged write is lost;
// once the network heals, the former primary comes back read-only (a replica, or diverged by the
// commits nobody acknowledged).
func TestOperatorFailoverNetworkCut(t *testing.T) {
	w := startNetCutWorld(t)
	steps := []step[*netCutWorld]{
		{"the operator creates the Pods and the Cluster becomes Ready", func(t *testing.T, w *netCutWorld) {
			testOperatorComeUp(t, w.operatorWorld)
		}},
		{"a primary cut from everything is replaced within the bound, never two writers, no acknowledged write lost", testNetworkCutFailover},
	}
	runSteps(t, w, steps, w.explain)
}

func startNetCutWorld(t *testing.T) *netCutWorld {
	nw := &netCutWorld{paths: map[string][]*cutproxy.Proxy{}, peers: map[string][]*cutproxy.Proxy{}}
	prepare := func(w *world) {
		apiServer := must1(url.Parse(w.env.Config.Host))(t).Host
		port := func(p *cutproxy.Proxy) int {
			_, s, err := net.SplitHostPort(p.Addr())
			must(t, err)
			return must1(strconv.Atoi(s))(t)
		}
		for name, n := range w.nodes {
			api := cutproxy.Start(t, "127.0.0.1:0", apiServer)
			n.kubeconfig = proxiedKubeconfig(t, w.kubeconfig, api.Addr())
			op := cutproxy.Start(t, net.JoinHostPort(n.host, "0"), net.JoinHostPort(n.host, strconv.Itoa(n.apiPort)))
			n.operatorAPIPort = port(op)
			nw.paths[name] = append(nw.paths[name], api, op)
			// Production timings of the instance: the role reconciler's default period.
			n.args = append(n.args, "--reconcile-interval", "1s")
			n.peerAPIPorts, n.peerMySQLPorts = map[string]int{}, map[string]int{}
		}
		for from, f := range w.nodes {
			for to, n := range w.nodes {
				if from == to {
					continue
				}
				ctl := cutproxy.Start(t, net.JoinHostPort(n.host, "0"), net.JoinHostPort(n.host, strconv.Itoa(n.apiPort)))
				sql := cutproxy.Start(t, net.JoinHostPort(n.host, "0"), net.JoinHostPort(n.host, strconv.Itoa(n.mysqlPort)))
				f.peerAPIPorts[to], f.peerMySQLPorts[to] = port(ctl), port(sql)
				nw.paths[from] = append(nw.paths[from], ctl, sql)
				nw.paths[to] = append(nw.paths[to], ctl, sql)
				nw.peers[from] = append(nw.peers[from], ctl, sql)
				nw.peers[to] = append(nw.peers[to], ctl, sql)
			}
		}
	}
	nw.operatorWorld = newOperatorWorld(t, worldOptions{startNone: true, firstHost: 28, cluster: func(c *v1alpha1.Cluster) {
		c.Spec.ImageName = "mysql:test"
		c.Spec.FailoverDelay = 0
		c.Spec.MinSyncReplicas, c.Spec.MaxSyncReplicas = 1, 1
		c.Spec.MySQL.SemiSync.DataDurability = v1alpha1.DataDurabilityRequired
	}}, 0, prepare)
	return nw
}

func (w *netCutWorld) cut(name string) {
	for _, p := range w.paths[name] {
		p.Cut()
	}
}

func (w *netCutWorld) heal(name string) {
	for _, p := range w.paths[name] {
		p.Restore()
	}
}

// cutPeers cuts name from the other instances only: clients, the API server and the operator
// still reach it (a partial partition).
func (w *netCutWorld) cutPeers(name string) {
	for _, p := range w.peers[name] {
		p.Cut()
	}
}

// stallPeers cuts name from the other instances silently: their connections stay open and pass
// nothing, as when a network drops packets; clients, the API server and the operator still reach
// it.
func (w *netCutWorld) stallPeers(name string) {
	for _, p := range w.peers[name] {
		p.Stall()
	}
}

// rtoTimes are the moments of one failover, from the cut.
type rtoTimes struct {
	cut, oldReadOnly, failing, targetSet, writable, accepted time.Time
	lastRenewal                                              time.Time
	newPrimary                                               string
}

func testNetworkCutFailover(t *testing.T, w *netCutWorld) {
	old := "db-1"
	others := []string{"db-2", "db-3"}
	writer := w.startWriter(t, 1000)
	eventually(t, 30*time.Second, "the writer's first acknowledged inserts", func() bool { return writer.count() >= 20 })

	// Sample every instance from outside the partition: the moments, and never two writers.
	var mu sync.Mutex
	var rt rtoTimes
	var twoWriters []string
	ctx, stopSampling := context.WithCancel(t.Context())
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for ctx.Err() == nil {
			now := time.Now()
			var writable []string
			for _, name := range []string{"db-1", "db-2", "db-3"} {
				if st := w.nodes[name].status(t); st != nil && st.Writable() {
					writable = append(writable, name)
				}
			}
			l := w.lease(t)
			c := w.cluster(t)
			mu.Lock()
			if len(writable) > 1 && twoWriters == nil {
				twoWriters = writable
			}
			if l != nil && holder(l) == old {
				rt.lastRenewal = renewTime(l)
			}
			if !rt.cut.IsZero() {
				if rt.oldReadOnly.IsZero() && !slices.Contains(writable, old) {
					rt.oldReadOnly = now
				}
				if rt.failing.IsZero() && c.Status.PrimaryFailingSince != nil {
					rt.failing = now
				}
				if rt.targetSet.IsZero() && c.Status.TargetPrimary != old {
					rt.targetSet = now
				}
				for _, name := range writable {
					if name != old && rt.writable.IsZero() {
						rt.writable, rt.newPrimary = now, name
					}
				}
			}
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	defer func() { stopSampling(); <-sampled }()
	// A client of the new primary: one insert attempt per 100 ms on each replica, as the
	// application (the first one acknowledged is the end of the outage).
	probes := map[string]*sql.DB{}
	for _, name := range others {
		probes[name] = appDB(t, w.nodes[name])
	}

	eventually(t, 10*time.Second, "the Lease renewed by db-1 seen", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !rt.lastRenewal.IsZero()
	})
	mu.Lock()
	rt.cut = time.Now()
	mu.Unlock()
	w.cut(old)
	defer w.heal(old)
	id := 900000
	eventually(t, 2*rtoBound, "a write accepted by a new primary", func() bool {
		for _, name := range others {
			id++
			ictx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			_, err := probes[name].ExecContext(ictx, "INSERT INTO app.t VALUES (?)", id)
			cancel()
			if err == nil {
				mu.Lock()
				rt.accepted = time.Now()
				if rt.newPrimary == "" {
					rt.newPrimary = name
				}
				mu.Unlock()
				return true
			}
		}
		time.Sleep(100 * time.Millisecond)
		return false
	})
	// The new primary stays writable: the sampler, a round behind the write, sees it too.
	eventually(t, 10*time.Second, "the sampler seeing the new primary writable", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !rt.writable.IsZero()
	})
	mu.Lock()
	r := rt
	mu.Unlock()
	since := func(at time.Time) string {
		if at.IsZero() {
			return "never"
		}
		return at.Sub(r.cut).Round(10 * time.Millisecond).String()
	}
	t.Logf("network cut of %s; from the cut: its last renewal %s, read-only (self-fenced) %s, primaryFailingSince set %s, "+
		"targetPrimary %s %s, %s writable %s, first write accepted %s",
		old, since(r.lastRenewal), since(r.oldReadOnly), since(r.failing), r.newPrimary, since(r.targetSet), r.newPrimary,
		since(r.writable), since(r.accepted))
	if twoWriters != nil {
		t.Errorf("two instances writable at once: %v", twoWriters)
	}
	if rto := r.accepted.Sub(r.cut); rto > rtoBound {
		t.Errorf("the first write on the new primary was accepted %s after the cut, over the bound %s", rto, rtoBound)
	}
	if r.writable.IsZero() || r.oldReadOnly.IsZero() || !r.oldReadOnly.Before(r.writable) {
		t.Errorf("%s seen read-only at %s, the new primary writable at %s: not in that order", old, since(r.oldReadOnly), since(r.writable))
	}
	if !r.writable.IsZero() && r.writable.Before(r.lastRenewal.Add(instance.LeaseTTL)) {
		t.Errorf("the new primary writable %s after the cut, before %s's last renewal plus the TTL (%s)", since(r.writable), old,
			since(r.lastRenewal.Add(instance.LeaseTTL)))
	}
	ev := w.events(t)
	for _, reason := range []string{failover.EventPrimaryFailing, failover.EventFailoverDeletingPod, failover.EventFailoverPromoting} {
		if ev[reason] == "" {
			t.Errorf("no %s Event; Events: %v", reason, ev)
		}
	}

	// Heal. No acknowledged write is lost, and the former primary comes back read-only, as a
	// replica of the new primary or listed diverged (its last commits, which no replica
	// acknowledged before it self-fenced, are in its binary log only).
	w.heal(old)
	acked, fails := writer.finish()
	newPrimary := w.nodes[r.newPrimary]
	if missing := missingRows(t, newPrimary, acked); len(missing) > 0 {
		t.Errorf("%d of %d acknowledged inserts missing on the new primary %s: %v", len(missing), len(acked), r.newPrimary, missing)
	}
	t.Logf("writer: %d inserts acknowledged, %d not (cut, fenced or timed out)", len(acked), fails)
	var outcome string
	eventually(t, 180*time.Second, old+" back, read-only: a replica of "+r.newPrimary+" or listed diverged", func() bool {
		c := w.cluster(t)
		st := w.nodes[old].status(t)
		switch {
		case st == nil || st.Writable():
			return false
		case slices.Contains(c.Status.DivergedInstances, old):
			outcome = "listed diverged"
			return true
		case st.Replication != nil && st.Replication.Healthy() && c.Status.CurrentPrimary == r.newPrimary &&
			meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady):
			outcome = "a replica again, the Cluster Ready"
			return true
		}
		return false
	})
	t.Logf("%s after the heal: %s", old, outcome)
}
