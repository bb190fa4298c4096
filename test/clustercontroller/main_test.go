package clustercontroller

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/cluster"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

var (
	env *kubetest.Env
	// kc is an uncached client without the default client-side rate limit, which the fake kubelet
	// and the polling loops would otherwise exhaust.
	kc      client.Client
	clk     *clocktesting.FakePassiveClock
	reports = &fakeReports{errs: map[string]error{}, gtids: map[string]string{}, lags: map[string]int64{}}
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	var err error
	if env, err = kubetest.Start(kubetest.Options{ControllerManager: true}); err != nil {
		return 1, err
	}
	defer env.Stop()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	if kc, err = client.New(cfg, client.Options{Scheme: env.Scheme}); err != nil {
		return 1, err
	}
	if err := env.EnsureNode(context.Background(), nodeName); err != nil {
		return 1, err
	}
	if os.Getenv("CLUSTER_TEST_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	// client-go drops Normal Events of one object beyond a burst of 25 (then one per 5 minutes);
	// a test walking one Cluster through many transitions needs a larger burst to see them all.
	broadcaster := record.NewBroadcasterWithCorrelatorOptions(record.CorrelatorOptions{BurstSize: 500})
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, EventBroadcaster: broadcaster,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: kit.CacheOptions(), Client: kit.ClientOptions()})
	if err != nil {
		return 1, err
	}
	clk = clocktesting.NewFakePassiveClock(time.Now())
	r := &cluster.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), RESTMapper: mgr.GetRESTMapper(),
		Recorder: mgr.GetEventRecorderFor("cluster-controller"), Clock: clk, OperatorImage: "operator:test",
		Instances: reports, ReportInterval: 500 * time.Millisecond}
	if err := r.SetupWithManager(mgr); err != nil {
		return 1, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	code := m.Run()
	cancel()
	return code, <-done
}

// fakeReports stands in for the instance managers: every running Pod answers with the role the
// Cluster status gives it and the GTID set the test gave it, unless the test made it fail.
type fakeReports struct {
	mu    sync.Mutex
	errs  map[string]error  // namespace/instance
	gtids map[string]string // namespace/instance
	lags  map[string]int64  // namespace/instance: replica lag in seconds
}

func (f *fakeReports) setLag(ns, instance string, seconds int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lags[ns+"/"+instance] = seconds
}

func (f *fakeReports) set(ns, instance, gtid string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gtids[ns+"/"+instance], f.errs[ns+"/"+instance] = gtid, err
}

func (f *fakeReports) InstanceStatuses(_ context.Context, c *v1.Cluster, pods []corev1.Pod) (map[string]*instanceclient.Status, map[string]error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, errs := map[string]*instanceclient.Status{}, map[string]error{}
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		key := p.Namespace + "/" + p.Name
		if err := f.errs[key]; err != nil {
			errs[p.Name] = err
			continue
		}
		// As the instances do: only the one recorded as current primary is writable; the others
		// are read-only replicas of it.
		st := &instanceclient.Status{Instance: p.Name, Role: v1.RoleReplica, ReadOnly: true, SuperReadOnly: true, GTIDExecuted: f.gtids[key]}
		if p.Name == c.Status.CurrentPrimary {
			st.Role, st.ReadOnly, st.SuperReadOnly = v1.RolePrimary, false, false
			st.SemiSync = &instanceclient.SemiSyncStatus{Active: true, WaitForReplicaCount: 1, Clients: 1}
		} else {
			st.Replication = &instanceclient.ReplicationStatus{IORunning: true, SQLRunning: true, LagSeconds: f.lags[key],
				SourceInstance: c.Status.CurrentPrimary}
		}
		out[p.Name] = st
	}
	return out, errs
}

// StopReplicaIO and Demote stand in for the instances' control API: the fake instances' roles
// follow the Cluster status alone, so there is nothing to change.
func (f *fakeReports) StopReplicaIO(context.Context, *v1.Cluster, corev1.Pod) error { return nil }

func (f *fakeReports) Demote(context.Context, *v1.Cluster, corev1.Pod) error { return nil }

// newCluster creates a Cluster in a new namespace and starts a fake kubelet there.
func newCluster(t *testing.T, instances int32, mutate func(*v1.Cluster)) *v1.Cluster {
	t.Helper()
	ns := env.NewNamespace(t)
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec: v1.ClusterSpec{Instances: instances, MaxSwitchoverDelay: 3600, ImageName: "mysql:test",
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")}}}
	if mutate != nil {
		mutate(c)
	}
	if err := kc.Create(context.Background(), c); err != nil {
		t.Fatalf("creating the Cluster: %v", err)
	}
	startKubelet(t, ns)
	return c
}

// waitTimeout is how long a test waits for the controller to get somewhere.
const waitTimeout = time.Minute

// getCluster reads the Cluster again.
func getCluster(t *testing.T, c *v1.Cluster) *v1.Cluster {
	t.Helper()
	var out v1.Cluster
	if err := kc.Get(context.Background(), client.ObjectKeyFromObject(c), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// setPrimary plays the instance managers: the target promoted itself and wrote currentPrimary.
func setPrimary(t *testing.T, c *v1.Cluster, name string) {
	t.Helper()
	check.Eventually(t, waitTimeout, "writing currentPrimary "+name, func(ctx context.Context) (bool, error) {
		cur := getCluster(t, c)
		old := cur.DeepCopy()
		cur.Status.CurrentPrimary, cur.Status.TargetPrimary = name, name
		err := kc.Status().Patch(ctx, cur, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{}))
		return err == nil, err
	})
}

// updateCluster changes the Cluster's spec or status with f, retrying on conflicts.
func updateCluster(t *testing.T, c *v1.Cluster, status bool, f func(*v1.Cluster)) {
	t.Helper()
	check.Eventually(t, waitTimeout, "updating the Cluster", func(ctx context.Context) (bool, error) {
		cur := getCluster(t, c)
		old := cur.DeepCopy()
		f(cur)
		patch := client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})
		var err error
		if status {
			err = kc.Status().Patch(ctx, cur, patch)
		} else {
			err = kc.Patch(ctx, cur, patch)
		}
		return err == nil, err
	})
}
