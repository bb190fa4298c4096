package cluster_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/cluster"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/metricstest"
)

const gtidA = "3e11fa47-71ca-11e1-9e33-c80aa9429562"

// roleInstances adds the role changes of a failover or switchover to fakeInstances: a replica
// whose IO thread the operator stops reports it stopped, a demoted primary reports read-only.
type roleInstances struct{ *fakeInstances }

func (f roleInstances) StopReplicaIO(_ context.Context, _ *v1.Cluster, pod corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.reports[pod.Name]; r != nil && r.Replication != nil {
		r.Replication.IORunning = false
	}
	return nil
}

// Demote turns the instance read-only in its report, as its manager does.
func (f roleInstances) Demote(_ context.Context, _ *v1.Cluster, pod corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.reports[pod.Name]; r != nil {
		r.ReadOnly, r.SuperReadOnly = true, true
	}
	return nil
}

func (f *fakeInstances) report(name string, s *instanceclient.Status) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s == nil {
		delete(f.reports, name)
		return
	}
	f.reports[name] = s
}

func primaryStatus(executed string) *instanceclient.Status {
	return &instanceclient.Status{Role: v1.RolePrimary, GTIDExecuted: executed}
}

func replicaStatus(source, executed string) *instanceclient.Status {
	return &instanceclient.Status{Role: v1.RoleReplica, ReadOnly: true, SuperReadOnly: true, GTIDExecuted: executed,
		Replication: &instanceclient.ReplicationStatus{SourceInstance: source, IORunning: true, SQLRunning: true, GTIDRetrieved: executed}}
}

// metricsWorld is a clusterWorld whose instances also take role changes, with the Cluster's
// metric labels.
type metricsWorld struct {
	*clusterWorld
	labels map[string]string
}

func newMetricsWorld(t *testing.T, instances int32) *metricsWorld {
	w := newClusterWorld(t, func(c *v1.Cluster) { c.Spec.Instances, c.Spec.FailoverDelay = instances, 0 })
	w.rec.Instances = roleInstances{w.instances}
	return &metricsWorld{clusterWorld: w, labels: map[string]string{"namespace": w.NS, "cluster": "db"}}
}

// value is the Cluster's series of name (a histogram's sample count); -1 when it has none.
func (w *metricsWorld) value(name string) float64 {
	w.T.Helper()
	v, ok := metricstest.Value(w.T, ctrlmetrics.Registry, name, w.labels)
	if !ok {
		return -1
	}
	return v
}

func (w *metricsWorld) blocked(reason string) float64 {
	w.T.Helper()
	v, _ := metricstest.Value(w.T, ctrlmetrics.Registry, "cnm_failovers_blocked_total",
		map[string]string{"namespace": w.NS, "cluster": "db", "reason": reason})
	return v
}

// readyPods marks every Pod of the Cluster running and Ready, as a kubelet would.
func (w *metricsWorld) readyPods() int {
	w.T.Helper()
	var pods corev1.PodList
	if err := w.Client.List(w.Ctx, &pods, client.InNamespace(w.NS)); err != nil {
		w.T.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodRunning {
			continue
		}
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		w.UpdateStatus(p)
	}
	return len(pods.Items)
}

// recordPrimary writes status.currentPrimary (and its timestamp, at the clock's now) as the
// promoted instance does.
func (w *metricsWorld) recordPrimary(name string) metav1.Time {
	w.T.Helper()
	var c v1.Cluster
	w.Get("db", &c)
	at := metav1.NewTime(w.Clock.Now())
	c.Status.CurrentPrimary, c.Status.CurrentPrimaryTimestamp = name, &at
	w.UpdateStatus(&c)
	w.Get("db", &c)
	return *c.Status.CurrentPrimaryTimestamp
}

// reconcileUntil reconciles, a second of the clock apart, until done holds (at most 30 times).
func (w *metricsWorld) reconcileUntil(what string, done func(c *v1.Cluster) bool) {
	w.T.Helper()
	for range 30 {
		w.Clock.Step(time.Second)
		w.reconcileOK()
		w.readyPods()
		var c v1.Cluster
		w.Get("db", &c)
		if done(&c) {
			return
		}
	}
	w.T.Fatalf("after 30 reconciles: not %s", what)
}

// healthy brings up instances db-1 (primary) to db-n, Ready, reporting as such.
func (w *metricsWorld) healthy(n int) {
	w.T.Helper()
	w.instances.report("db-1", primaryStatus(gtidA+":1-10"))
	for i := 2; i <= n; i++ {
		w.instances.report(instanceName(i), replicaStatus("db-1", gtidA+":1-"+strconv.Itoa(8+i)))
	}
	w.reconcileOK()
	w.recordPrimary("db-1")
	w.reconcileUntil("every instance ready", func(c *v1.Cluster) bool { return c.Status.ReadyInstances == int32(n) })
	// Past the new primary's grace: a failure from now on is failed over.
	w.Clock.Step(time.Minute)
	w.reconcileOK()
}

func instanceName(i int) string { return "db-" + strconv.Itoa(i) }

// deletePod deletes an instance's Pod; unscheduled, it is gone at once.
func (w *metricsWorld) deletePod(name string) {
	w.T.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.NS, Name: name}}
	if err := w.Client.Delete(w.Ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		w.T.Fatal(err)
	}
	w.Eventually(name+" gone", w.Gone(pod))
}

// TestFailoverCountedOnce: the operator's view follows the instances; a failover, driven through
// its steps by the real reconciler, counts one failover and observes its duration, from the
// failure recorded to the promotion recorded; more reconciles, and a new reconciler (an operator
// restart), count nothing more; the Cluster's series vanish with it.
func TestFailoverCountedOnce(t *testing.T) {
	w := newMetricsWorld(t, 3)
	w.healthy(3)
	for name, want := range map[string]float64{"cnm_cluster_instances": 3, "cnm_cluster_ready_instances": 3,
		"cnm_cluster_primary_known": 1, "cnm_cluster_writable_instances_seen": 1, "cnm_cluster_fenced_instances": 0,
		"cnm_cluster_diverged_instances": 0, "cnm_failovers_total": 0, "cnm_switchovers_total": 0,
		"cnm_failover_duration_seconds": 0} {
		if got := w.value(name); got != want {
			t.Errorf("healthy: %s = %v, want %v", name, got, want)
		}
	}
	if got := w.blocked("FailoverBlocked"); got != 0 {
		t.Errorf("healthy: blocked %v, want 0", got)
	}

	w.instances.report("db-1", nil)
	w.deletePod("db-1")
	w.reconcileUntil("db-3 named the target", func(c *v1.Cluster) bool { return c.Status.TargetPrimary == "db-3" })
	var c v1.Cluster
	w.Get("db", &c)
	failingSince := c.Status.PrimaryFailingSince
	if failingSince == nil {
		t.Fatal("the failover named its target without a failure recorded")
	}
	if got := w.value("cnm_failovers_total"); got != 0 {
		t.Errorf("before the promotion: failovers %v, want 0", got)
	}

	// db-3 promotes itself and records it; db-2 follows it.
	w.Clock.Step(3 * time.Second)
	promoted := w.recordPrimary("db-3")
	w.instances.report("db-3", primaryStatus(gtidA+":1-11"))
	w.instances.report("db-2", replicaStatus("db-3", gtidA+":1-11"))
	w.reconcileUntil("the failure record cleared", func(c *v1.Cluster) bool { return c.Status.PrimaryFailingSince == nil })
	if got := w.value("cnm_failovers_total"); got != 1 {
		t.Errorf("failovers %v, want 1", got)
	}
	want := promoted.Sub(failingSince.Time).Seconds()
	if got := metricstest.HistogramSum(t, ctrlmetrics.Registry, "cnm_failover_duration_seconds",
		map[string]string{"namespace": w.NS, "cluster": "db", "kind": "failover"}); math.Abs(got-want) > 0.001 || want <= 0 {
		t.Errorf("failover duration observed %v s, want %v s (failure recorded to promotion recorded)", got, want)
	}
	if got := w.value("cnm_cluster_writable_instances_seen"); got != 1 {
		t.Errorf("after the failover: writable seen %v, want 1", got)
	}

	for range 3 {
		w.Clock.Step(time.Second)
		w.reconcileOK()
	}
	restarted := &cluster.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock,
		OperatorImage: "operator:test", Instances: roleInstances{w.instances}}
	w.rec = restarted
	w.reconcileOK()
	if got := w.value("cnm_failovers_total"); got != 1 {
		t.Errorf("after more reconciles and a restart: failovers %v, want 1", got)
	}
	if got := w.value("cnm_failover_duration_seconds"); got != 1 {
		t.Errorf("duration samples %v, want 1", got)
	}

	w.Get("db", &c)
	if err := w.Client.Delete(w.Ctx, &c); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the Cluster gone", w.Gone(&c))
	w.reconcileOK()
	if n, err := testutil.GatherAndCount(metricstest.Of(ctrlmetrics.Registry, w.labels)); err != nil || n != 0 {
		t.Errorf("after the Cluster's deletion: %d series left (%v), want none", n, err)
	}
}

// TestBlockedFailoverCountedPerEpisode: a single instance whose primary fails cannot fail over;
// its blocked failover is counted once however many reconciles decide it, and again once it
// recovered and fails anew.
func TestBlockedFailoverCountedPerEpisode(t *testing.T) {
	w := newMetricsWorld(t, 1)
	w.healthy(1)
	fail := func() {
		w.instances.report("db-1", nil)
		w.deletePod("db-1")
		w.reconcileUntil("the failover blocked", func(c *v1.Cluster) bool {
			d := degraded(c)
			return d != nil && d.Reason == "FailoverBlocked"
		})
		for range 5 {
			w.Clock.Step(time.Second)
			w.reconcileOK()
		}
	}
	fail()
	if got := w.blocked("FailoverBlocked"); got != 1 {
		t.Errorf("first episode over several reconciles: blocked %v, want 1", got)
	}
	if got := w.value("cnm_failovers_total"); got != 0 {
		t.Errorf("blocked: failovers %v, want 0", got)
	}

	w.instances.report("db-1", primaryStatus(gtidA+":1-10"))
	w.reconcileUntil("the primary recovered", func(c *v1.Cluster) bool { return c.Status.PrimaryFailingSince == nil })
	if got := w.blocked("FailoverBlocked"); got != 1 {
		t.Errorf("recovered: blocked %v, want 1", got)
	}
	w.Clock.Step(time.Minute)
	fail()
	if got := w.blocked("FailoverBlocked"); got != 2 {
		t.Errorf("second episode: blocked %v, want 2", got)
	}
}

func degraded(c *v1.Cluster) *metav1.Condition {
	for i := range c.Status.Conditions {
		if c.Status.Conditions[i].Type == v1.ConditionDegraded && c.Status.Conditions[i].Status == metav1.ConditionTrue {
			return &c.Status.Conditions[i]
		}
	}
	return nil
}

// TestSwitchoverCountedOnce: a switchover requested as the plugin's promote does, driven through
// its steps by the real reconciler, counts one switchover and observes its duration, from the
// request to the promotion recorded, once the primary label moves; more reconciles and a new
// reconciler count nothing more. When the relabel removes the old primary's label and then fails
// on the new primary's Pod (a conflict with the kubelet's status write), the switchover is still
// counted, once.
func TestSwitchoverCountedOnce(t *testing.T) {
	t.Run("the label moves in one reconcile", func(t *testing.T) { testSwitchoverCountedOnce(t, false) })
	t.Run("the new primary's label fails once after the old one's was removed", func(t *testing.T) { testSwitchoverCountedOnce(t, true) })
}

func testSwitchoverCountedOnce(t *testing.T, failNewLabelOnce bool) {
	w := newMetricsWorld(t, 3)
	w.healthy(3)
	var c v1.Cluster
	w.Get("db", &c)
	requested := metav1.NewTime(w.Clock.Now())
	c.Status.TargetPrimary, c.Status.TargetPrimaryTimestamp = "db-3", &requested
	w.UpdateStatus(&c)
	w.Get("db", &c)
	requested = *c.Status.TargetPrimaryTimestamp

	w.reconcileUntil("db-1 demoted", func(*v1.Cluster) bool {
		w.instances.mu.Lock()
		defer w.instances.mu.Unlock()
		return w.instances.reports["db-1"].SuperReadOnly
	})
	w.Clock.Step(4 * time.Second)
	promoted := w.recordPrimary("db-3")
	w.instances.report("db-3", primaryStatus(gtidA+":1-11"))
	w.instances.report("db-2", replicaStatus("db-3", gtidA+":1-11"))
	w.instances.report("db-1", replicaStatus("db-3", gtidA+":1-11"))
	if failNewLabelOnce {
		failed := false
		base, err := client.NewWithWatch(w.Env.Config, client.Options{Scheme: w.Env.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		flaky := interceptor.NewClient(base, interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				if pod, ok := obj.(*corev1.Pod); ok && pod.Name == "db-3" && !failed {
					failed = true
					return apierrors.NewConflict(corev1.Resource("pods"), pod.Name, errors.New("the kubelet wrote first"))
				}
				return c.Patch(ctx, obj, patch, opts...)
			}})
		r := &cluster.Reconciler{Client: flaky, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock,
			OperatorImage: "operator:test", Instances: roleInstances{w.instances}}
		// A conflict is retried by requeueing, not returned.
		_, _ = r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: w.NS, Name: "db"}})
		var old, next corev1.Pod
		w.Get("db-1", &old)
		w.Get("db-3", &next)
		if !failed || old.Labels[v1.RoleLabel] == v1.RolePrimary || next.Labels[v1.RoleLabel] == v1.RolePrimary {
			t.Fatalf("want the old primary's label removed and the new one's patch refused: patch refused %v, db-1 %q, db-3 %q",
				failed, old.Labels[v1.RoleLabel], next.Labels[v1.RoleLabel])
		}
	}
	w.reconcileUntil("the primary label on db-3", func(*v1.Cluster) bool {
		var pod corev1.Pod
		w.Get("db-3", &pod)
		return pod.Labels[v1.RoleLabel] == v1.RolePrimary
	})
	for range 3 {
		w.Clock.Step(time.Second)
		w.reconcileOK()
	}
	w.rec = &cluster.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock,
		OperatorImage: "operator:test", Instances: roleInstances{w.instances}}
	w.reconcileOK()
	if got := w.value("cnm_switchovers_total"); got != 1 {
		t.Errorf("switchovers %v, want 1", got)
	}
	if got := w.value("cnm_failovers_total"); got != 0 {
		t.Errorf("failovers %v, want 0", got)
	}
	want := promoted.Sub(requested.Time).Seconds()
	if got := metricstest.HistogramSum(t, ctrlmetrics.Registry, "cnm_failover_duration_seconds",
		map[string]string{"namespace": w.NS, "cluster": "db", "kind": "switchover"}); math.Abs(got-want) > 0.001 || want <= 0 {
		t.Errorf("switchover duration observed %v s, want %v s (request to promotion recorded)", got, want)
	}
}
