package instancemanager

import (
	"context"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/cluster"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/ctrlworld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/cutproxy"
)

// operatorWorld is the world of TestInstanceManagers with the Cluster reconciler running
// in-process against the same API server, and a fake kubelet standing for the node.
type operatorWorld struct {
	*world
	cw      *ctrlworld.World
	kubelet *fakeKubelet
	// root is the test the steps run in: what must outlive a step is cleaned up with it.
	root *testing.T
}

// failoverDelay leaves time for a stopped replica to come back before the failover picks its
// candidate, so that the choice is made among several: its restart took up to 22 s on a machine
// busy with other test runs.
const failoverDelay = 30

// TestOperatorFailover runs the Cluster reconciler against three `manager instance run`
// processes with real mysqld: it creates the instances' Pods (a fake kubelet reports them ready
// from each manager's readiness probe, and stops or restarts a manager when its Pod is deleted or
// created again), fails over from a stopped primary to the most advanced replica, lets the former
// primary rejoin, fences and unfences, and keeps a diverged instance out of service. The steps
// share the world and run in order.
func TestOperatorFailover(t *testing.T) {
	w := startOperatorWorld(t)
	steps := []step[*operatorWorld]{
		{"the operator creates the Pods and the Cluster becomes Ready", testOperatorComeUp},
		{"a stopped primary is replaced by the most advanced replica after failoverDelay", testAutomaticFailover},
		{"the former primary's Pod comes back and it rejoins as a replica", testFormerPrimaryRejoins},
		{"fencing a replica takes it out of routing; unfencing brings it back", testFenceReplica},
		{"fencing the primary stops its writes and releases the Lease, without a failover", testFencePrimary},
		{"a switchover whose target cannot reach the old primary waits for its Lease; never two writers", testSwitchoverTargetCut},
		{"a diverged instance is listed, out of every Service, its PVC kept", testOperatorDiverged},
	}
	runSteps(t, w, steps, w.explain)
}

func startOperatorWorld(t *testing.T) *operatorWorld {
	return newOperatorWorld(t, worldOptions{cluster: func(c *v1alpha1.Cluster) {
		c.Spec.ImageName = "mysql:test"
		c.Spec.FailoverDelay = failoverDelay
	}}, 500*time.Millisecond, nil)
}

// newOperatorWorld starts the world of o, then the fake kubelet and the Cluster reconciler
// (reporting every reportInterval, 0 for its default). With o.startNone, prepare runs before
// every node is started (to put proxies in their paths, say).
func newOperatorWorld(t *testing.T, o worldOptions, reportInterval time.Duration, prepare func(*world)) *operatorWorld {
	w := newWorld(t, o)
	if o.startNone {
		if prepare != nil {
			prepare(w)
		}
		for _, name := range slices.Sorted(maps.Keys(w.nodes)) {
			w.start(t, w.nodes[name])
		}
	}
	k := &fakeKubelet{w: w, runningFor: map[string]types.UID{}, down: map[string]bool{}}
	k.start(t)
	cw := &ctrlworld.World{T: t, Ctx: context.Background(), Env: w.env, Client: w.env.Client, NS: w.key.Namespace}
	// The test reads every phase's Event: a burst larger than client-go's default 25 per object.
	broadcaster := record.NewBroadcasterWithCorrelatorOptions(record.CorrelatorOptions{BurstSize: 500})
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: must1(kubernetes.NewForConfig(w.env.Config))(t).CoreV1().Events("")})
	t.Cleanup(broadcaster.Shutdown)
	recorder := broadcaster.NewRecorder(w.env.Scheme, corev1.EventSource{Component: "cluster-controller"})
	cw.StartManager(func(mgr ctrl.Manager) error {
		r := &cluster.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Recorder: recorder, Clock: clock.RealClock{},
			OperatorImage: "operator:test", Instances: harnessInstances{w}, ReportInterval: reportInterval}
		return r.SetupWithManager(mgr)
	})
	return &operatorWorld{world: w, cw: cw, kubelet: k, root: t}
}

// harnessInstances is the operator's view of the instance managers: their control API over
// mTLS, at the addresses the harness gave them.
type harnessInstances struct{ w *world }

func (h harnessInstances) InstanceStatuses(ctx context.Context, _ *v1alpha1.Cluster, pods []corev1.Pod) (map[string]*instanceclient.Status, map[string]error) {
	out, errs := map[string]*instanceclient.Status{}, map[string]error{}
	for _, p := range pods {
		n := h.w.nodes[p.Name]
		if n == nil || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		st, err := h.w.operator.Status(ctx, n.operatorTarget())
		if err != nil {
			errs[p.Name] = err
			continue
		}
		out[p.Name] = st
	}
	return out, errs
}

func (h harnessInstances) StopReplicaIO(ctx context.Context, _ *v1alpha1.Cluster, pod corev1.Pod) error {
	return h.w.operator.StopReplicaIO(ctx, h.w.nodes[pod.Name].operatorTarget())
}

func (h harnessInstances) Demote(ctx context.Context, _ *v1alpha1.Cluster, pod corev1.Pod) error {
	return h.w.operator.Demote(ctx, h.w.nodes[pod.Name].operatorTarget())
}

// fakeKubelet reports each Pod Running, with its node's address, and Ready when the node's
// manager answers its readiness probe. Like a kubelet it stops a node's manager (SIGTERM) when its
// Pod is deleted and starts it again when a new Pod of that name appears. A node the test stopped
// itself stays stopped until the test starts it.
type fakeKubelet struct {
	w *world
	// mu is held while a node is started or stopped, by the kubelet or the test.
	mu sync.Mutex
	// runningFor is the UID of the Pod each node runs for; "" once that Pod was deleted.
	runningFor map[string]types.UID
	// down lists the nodes crashed for good (crashNode): no new Pod starts them again.
	down map[string]bool
}

func (k *fakeKubelet) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var pods corev1.PodList
			if err := k.w.env.Client.List(ctx, &pods, client.InNamespace(k.w.key.Namespace)); err == nil {
				for i := range pods.Items {
					k.sync(ctx, t, &pods.Items[i])
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
}

func (k *fakeKubelet) sync(ctx context.Context, t *testing.T, pod *corev1.Pod) {
	n := k.w.nodes[pod.Name]
	if n == nil {
		return
	}
	k.mu.Lock()
	uid, known := k.runningFor[pod.Name]
	switch {
	case pod.DeletionTimestamp != nil:
		if !n.stopped {
			n.stop(t)
		}
		k.runningFor[pod.Name] = ""
		k.mu.Unlock()
		_ = k.w.env.Client.Delete(ctx, pod, client.GracePeriodSeconds(0))
		return
	case !known:
		k.runningFor[pod.Name] = pod.UID // the harness started the node before the Pod existed
	case uid != pod.UID:
		k.runningFor[pod.Name] = pod.UID
		if n.stopped && !k.down[pod.Name] {
			k.w.start(t, n)
		}
	}
	ready := corev1.ConditionFalse
	if !n.stopped && n.probe("/readyz") == 200 {
		ready = corev1.ConditionTrue
	}
	k.mu.Unlock()
	if pod.Status.Phase == corev1.PodRunning && len(pod.Status.Conditions) == 1 && pod.Status.Conditions[0].Status == ready {
		return
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: n.host, PodIPs: []corev1.PodIP{{IP: n.host}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}
	_ = k.w.env.Client.Status().Update(ctx, pod)
}

// stopNode and startNode stop and start a node's manager as the test's own doing.
func (o *operatorWorld) stopNode(t *testing.T, name string) {
	o.kubelet.mu.Lock()
	defer o.kubelet.mu.Unlock()
	o.nodes[name].stop(t)
}

func (o *operatorWorld) startNode(t *testing.T, name string) {
	o.kubelet.mu.Lock()
	defer o.kubelet.mu.Unlock()
	delete(o.kubelet.down, name)
	o.start(t, o.nodes[name])
}

// crashNode kills a node's manager and mysqld at once (SIGKILL to the process group), as a node
// that dies, and keeps it down until the test starts it again (startNode).
func (o *operatorWorld) crashNode(t *testing.T, name string) {
	o.kubelet.mu.Lock()
	defer o.kubelet.mu.Unlock()
	n := o.nodes[name]
	o.kubelet.down[name] = true
	n.stopped = true
	if pid := n.mysqldPID(t); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	n.manager.Kill()
	_ = n.op.Close()
	_ = n.db.Close()
}

func (o *operatorWorld) pod(t *testing.T, name string) *corev1.Pod {
	var p corev1.Pod
	if err := o.env.Client.Get(t.Context(), types.NamespacedName{Namespace: o.key.Namespace, Name: name}, &p); err != nil {
		return nil
	}
	return &p
}

func routable(p *corev1.Pod) bool {
	return p != nil && p.Labels[v1alpha1.RoutableLabel] == specs.RoutableTrue
}

// events are the Cluster's Events: by reason, their messages.
func (o *operatorWorld) events(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, e := range o.cw.NamespaceEvents("db") {
		out[e.Reason] += e.Message + "; "
	}
	return out
}

// explain logs the Cluster's status and Events when the step failed.
func (o *operatorWorld) explain(t *testing.T) {
	if !t.Failed() {
		return
	}
	c := o.cluster(t)
	t.Logf("Cluster status: %+v", c.Status)
	for _, e := range o.cw.NamespaceEvents("db") {
		t.Logf("Event %s %s %s (x%d): %s", e.LastTimestamp.UTC().Format("15:04:05"), e.Type, e.Reason, e.Count, e.Message)
	}
	for _, name := range []string{"db-1", "db-2", "db-3"} {
		log, _ := os.ReadFile(filepath.Join(o.nodes[name].dir, "manager.log"))
		var lines []string
		previous := ""
		for _, l := range strings.Split(string(log), "\n") {
			if !strings.Contains(l, `"logger":"role"`) && !strings.Contains(l, `"logger":"lease"`) &&
				!strings.Contains(l, `"logger":"semisync"`) && !strings.Contains(l, `"level":"error"`) ||
				strings.Contains(l, "state unavailable") {
				continue
			}
			// A line repeated pass after pass (a diverged instance holding) is kept once, so
			// that the lines before it stay in view.
			if body := withoutTimestamp(l); body != previous {
				lines, previous = append(lines, l), body
			}
		}
		t.Logf("%s role, lease, semi-sync and error log (last lines):\n%s", name, strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
}

// withoutTimestamp drops the "ts" field of a JSON log line.
func withoutTimestamp(line string) string {
	if i := strings.Index(line, `"ts":"`); i >= 0 {
		if j := strings.Index(line[i+6:], `"`); j >= 0 {
			return line[:i] + line[i+6+j+1:]
		}
	}
	return line
}

func testOperatorComeUp(t *testing.T, o *operatorWorld) {
	o.waitRoles(t, 180*time.Second, "db-1", "db-2", "db-3")
	eventually(t, 60*time.Second, "the Cluster Ready, db-1 labelled primary", func() bool {
		c := o.cluster(t)
		ready := meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady)
		p := o.pod(t, "db-1")
		return ready && p != nil && p.Labels[v1alpha1.RoleLabel] == v1alpha1.RolePrimary && routable(p)
	})
	o.nodes["db-1"].exec(t, "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1)")
}

func testAutomaticFailover(t *testing.T, o *operatorWorld) {
	// db-2 misses the last writes: stopped while db-1 writes, started once db-1 is gone.
	o.stopNode(t, "db-2")
	p := o.nodes["db-1"]
	p.exec(t, "INSERT INTO app.t VALUES (2)", "INSERT INTO app.t VALUES (3)")
	last := p.status(t).GTIDExecuted
	eventually(t, 30*time.Second, "db-3 holding db-1's writes", func() bool {
		st := o.nodes["db-3"].status(t)
		return st != nil && st.GTIDExecuted.Contains(last)
	})
	// The primary is failing from the SIGTERM on: its manager closes its control API at once,
	// while mysqld's shutdown, which stopNode waits for, may take seconds more.
	stopping := time.Now()
	o.stopNode(t, "db-1")
	t.Logf("db-1's manager and mysqld stopped %s after SIGTERM", time.Since(stopping).Round(time.Millisecond))
	o.startNode(t, "db-2")
	var db2Seen time.Time
	eventually(t, failoverDelay*time.Second, "db-2 answering its control API, behind db-3", func() bool {
		st, err := o.operator.Status(t.Context(), o.nodes["db-2"].target())
		if err != nil || st.Bootstrapping {
			return false
		}
		db2Seen = time.Now()
		return !gtid.MustParse(st.GTIDExecuted).Contains(last)
	})
	t.Logf("db-2 answered %s after db-1's SIGTERM", db2Seen.Sub(stopping).Round(time.Millisecond))
	var failingSince time.Time
	eventually(t, 120*time.Second, "db-3 promoted and recorded as current primary", func() bool {
		c := o.cluster(t)
		if c.Status.PrimaryFailingSince != nil && failingSince.IsZero() {
			failingSince = c.Status.PrimaryFailingSince.Time
		}
		return c.Status.CurrentPrimary == "db-3"
	})
	c := o.cluster(t)
	if c.Status.TargetPrimary != "db-3" || c.Status.TargetPrimaryTimestamp == nil {
		t.Fatalf("targetPrimary %q at %v", c.Status.TargetPrimary, c.Status.TargetPrimaryTimestamp)
	}
	promoted := c.Status.TargetPrimaryTimestamp.Time
	t.Logf("primaryFailingSince %s after db-1's SIGTERM; targetPrimary set %s after that", failingSince.Sub(stopping).Round(time.Second),
		promoted.Sub(failingSince).Round(time.Second))
	// primaryFailingSince has a precision of one second.
	if failingSince.Before(stopping.Truncate(time.Second)) {
		t.Errorf("primaryFailingSince %s, before db-1 was stopped at %s: a healthy primary was recorded failing", failingSince, stopping)
	}
	if failingSince.IsZero() || promoted.Sub(failingSince) < failoverDelay*time.Second-time.Second {
		t.Errorf("targetPrimary set at %s, primaryFailingSince %s: want failoverDelay (%ds) between", promoted, failingSince, failoverDelay)
	}
	// targetPrimaryTimestamp has a precision of one second.
	if promoted.Before(db2Seen.Truncate(time.Second)) {
		t.Errorf("db-3 chosen at %s, before db-2 answered at %s: the choice was not among both", promoted, db2Seen)
	}
	st := o.nodes["db-3"].status(t)
	if st == nil || !st.Writable() || !st.GTIDExecuted.Contains(last) {
		t.Errorf("db-3 after promotion: %+v", st)
	}
	if got := holder(o.waitLeaseHeld(t, "db-3")); got != "db-3" {
		t.Errorf("Lease held by %q", got)
	}
	var pvc corev1.PersistentVolumeClaim
	must(t, o.env.Client.Get(t.Context(), types.NamespacedName{Namespace: o.key.Namespace, Name: "db-1"}, &pvc))
	ev := o.events(t)
	// FailoverStarted is the step that stops the replicas' IO threads reading from the old
	// primary, before its Pod is deleted and a replica promoted.
	for _, reason := range []string{failover.EventPrimaryFailing, failover.EventFailoverStarted, failover.EventFailoverDeletingPod, failover.EventFailoverPromoting} {
		if ev[reason] == "" {
			t.Errorf("no %s Event; Events: %v", reason, ev)
		}
	}
	if !strings.Contains(ev[failover.EventFailoverPromoting], "promote db-3") {
		t.Errorf("FailoverPromoting says %q, want db-3", ev[failover.EventFailoverPromoting])
	}
}

func testFormerPrimaryRejoins(t *testing.T, o *operatorWorld) {
	o.waitRoles(t, 180*time.Second, "db-3", "db-1", "db-2")
	eventually(t, 30*time.Second, "primaryFailingSince cleared, FailoverCompleted, rw on db-3", func() bool {
		c := o.cluster(t)
		p := o.pod(t, "db-3")
		return c.Status.PrimaryFailingSince == nil && o.events(t)[failover.EventFailoverCompleted] != "" &&
			p != nil && p.Labels[v1alpha1.RoleLabel] == v1alpha1.RolePrimary && routable(p)
	})
	c := o.cluster(t)
	if slices.Contains(c.Status.DivergedInstances, "db-1") {
		t.Errorf("db-1 listed diverged: %v", c.Status.DivergedInstances)
	}
	o.nodes["db-3"].exec(t, "INSERT INTO app.t VALUES (4)")
	o.waitRoles(t, 30*time.Second, "db-3", "db-1", "db-2")
}

// setFence writes the fencing annotation as the plugin's fence verb does; "" removes it.
func (o *operatorWorld) setFence(t *testing.T, value string) {
	eventually(t, 10*time.Second, "the fencing annotation written", func() bool {
		c := o.cluster(t)
		old := c.DeepCopy()
		if value == "" {
			delete(c.Annotations, v1alpha1.FencedInstancesAnnotation)
		} else {
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[v1alpha1.FencedInstancesAnnotation] = value
		}
		return o.env.Client.Patch(t.Context(), c, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})) == nil
	})
}

func testFenceReplica(t *testing.T, o *operatorWorld) {
	o.setFence(t, `["db-2"]`)
	eventually(t, 30*time.Second, "db-2 fenced: listed, not routable", func() bool {
		return slices.Equal(o.cluster(t).Status.FencedInstances, []string{"db-2"}) && !routable(o.pod(t, "db-2"))
	})
	if st := o.nodes["db-2"].status(t); st == nil || st.Writable() {
		t.Errorf("fenced db-2: %+v, want read-only", st)
	}
	o.setFence(t, "")
	eventually(t, 30*time.Second, "db-2 unfenced and routable", func() bool {
		return len(o.cluster(t).Status.FencedInstances) == 0 && routable(o.pod(t, "db-2"))
	})
	eventually(t, 10*time.Second, "Fenced and Unfenced Events", func() bool {
		ev := o.events(t)
		return ev["Fenced"] != "" && ev["Unfenced"] != ""
	})
}

func testFencePrimary(t *testing.T, o *operatorWorld) {
	o.setFence(t, `["db-3"]`)
	eventually(t, 30*time.Second, "db-3 fenced: read-only, its Lease released, out of rw", func() bool {
		st := o.nodes["db-3"].status(t)
		return st != nil && st.SuperReadOnly && holder(o.lease(t)) != "db-3" && !routable(o.pod(t, "db-3"))
	})
	// A fenced primary starts no failover: give the operator several reconciles to get it wrong.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if c := o.cluster(t); c.Status.PrimaryFailingSince != nil || c.Status.TargetPrimary != "db-3" {
			t.Fatalf("a fenced primary started a failover: failing since %v, target %s", c.Status.PrimaryFailingSince, c.Status.TargetPrimary)
		}
		time.Sleep(250 * time.Millisecond)
	}
	o.setFence(t, "")
	o.waitLeaseHeld(t, "db-3")
	o.waitRoles(t, 60*time.Second, "db-3", "db-1", "db-2")
	eventually(t, 30*time.Second, "db-3 back in rw", func() bool { return routable(o.pod(t, "db-3")) })
}

func testOperatorDiverged(t *testing.T, o *operatorWorld) {
	n := o.nodes["db-1"]
	n.errantWrite(t)
	eventually(t, 30*time.Second, "db-1 diverged: listed, not routable, Event", func() bool {
		return slices.Contains(o.cluster(t).Status.DivergedInstances, "db-1") && !routable(o.pod(t, "db-1")) &&
			o.events(t)["InstanceDiverged"] != ""
	})
	errant := n.status(t).GTIDExecuted
	eventually(t, 10*time.Second, "gtidExecutedByInstance[db-1] with the errant write", func() bool {
		g, err := gtid.Parse(o.cluster(t).Status.GTIDExecutedByInstance["db-1"])
		return err == nil && g.Contains(errant)
	})
	var pvc corev1.PersistentVolumeClaim
	must(t, o.env.Client.Get(t.Context(), types.NamespacedName{Namespace: o.key.Namespace, Name: "db-1"}, &pvc))
	if p := o.pod(t, "db-1"); p == nil || p.DeletionTimestamp != nil {
		t.Errorf("the diverged instance's Pod is kept for a human: %v", p)
	}
}

// testSwitchoverTargetCut: db-2 reaches db-3's control API only through a proxy, which is cut;
// the switchover to db-2 must not promote it on "unreachable": it waits until db-3, demoted by
// the operator (which still reaches it) or by itself, has released the Lease. Both servers are
// sampled all along: never are both writable.
func testSwitchoverTargetCut(t *testing.T, o *operatorWorld) {
	old, target := o.nodes["db-3"], o.nodes["db-2"]
	px := cutproxy.Start(o.root, net.JoinHostPort(old.host, "0"), old.target().Address)
	_, port, err := net.SplitHostPort(px.Addr())
	must(t, err)
	o.stopNode(t, "db-2")
	target.peerAPIPorts = map[string]int{"db-3": must1(strconv.Atoi(port))(t)}
	o.startNode(t, "db-2")
	o.waitRoles(t, 90*time.Second, "db-3", "db-1", "db-2")
	px.Cut()
	defer px.Restore()
	before := o.waitLeaseHeld(t, "db-3")

	var twoWriters atomic.Bool
	ctx, cancel := context.WithCancel(t.Context())
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for ctx.Err() == nil {
			a, b := old.status(t), target.status(t)
			if a != nil && b != nil && a.Writable() && b.Writable() {
				twoWriters.Store(true)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	o.setTarget(t, "db-2")
	o.waitRoles(t, 90*time.Second, "db-2", "db-1", "db-3")
	cancel()
	<-sampled
	if twoWriters.Load() {
		t.Error("db-2 and db-3 were both writable at once during the switchover")
	}
	after := o.waitLeaseHeld(t, "db-2")
	if after.UID == before.UID {
		t.Errorf("db-2 took db-3's Lease over (UID %s) instead of waiting for its release", after.UID)
	}
	log, err := os.ReadFile(filepath.Join(target.dir, "manager.log"))
	must(t, err)
	if !strings.Contains(string(log), `"primary's state unavailable","instance":"db-2","primary":"db-3"`) {
		t.Error("db-2's log does not show db-3's control API unreachable: the cut did not take")
	}
	eventually(t, 30*time.Second, "SwitchoverCompleted, rw on db-2", func() bool {
		p := o.pod(t, "db-2")
		return o.events(t)["SwitchoverCompleted"] != "" && p != nil && p.Labels[v1alpha1.RoleLabel] == v1alpha1.RolePrimary
	})
}
