package backup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/ctrlworld"
)

// bkWorld is a namespace on the real API server (with kube-controller-manager running the Job
// controller and the garbage collector) holding a Cluster "db" whose object store is a real
// versitygw, three ready instance Pods, and instance reports injected where the instance managers
// would answer. The test plays the kubelet: it sets the phase of the Job's Pod.
type bkWorld struct {
	*ctrlworld.World
	store   *ctrlworld.Store
	reports map[string]*instanceclient.Status
}

type bkReports struct{ w *bkWorld }

func (r bkReports) InstanceStatuses(_ context.Context, _ *v1.Cluster, pods []corev1.Pod) (map[string]*instanceclient.Status, map[string]error) {
	out := map[string]*instanceclient.Status{}
	for _, p := range pods {
		if st, ok := r.w.reports[p.Name]; ok {
			out[p.Name] = st
		}
	}
	return out, nil
}

func newBkWorld(t *testing.T) *bkWorld {
	t.Helper()
	w := &bkWorld{World: ctrlworld.New(t, shared),
		reports: map[string]*instanceclient.Status{
			"db-1": {Instance: "db-1", Role: v1.RolePrimary},
			"db-2": {Instance: "db-2", Role: v1.RoleReplica, Replication: &instanceclient.ReplicationStatus{IORunning: true, SQLRunning: true, LagSeconds: 30}},
			"db-3": {Instance: "db-3", Role: v1.RoleReplica, Replication: &instanceclient.ReplicationStatus{IORunning: true, SQLRunning: true, LagSeconds: 1}},
		}}
	w.store = w.StartStore("s3", "\n")
	w.createCluster("db", true)
	for _, name := range []string{"db-1", "db-2", "db-3"} {
		w.createReadyPod(name, "db")
	}
	return w
}

func (w *bkWorld) createCluster(name string, withStore bool) {
	w.T.Helper()
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS},
		Spec: v1.ClusterSpec{Instances: 3, ImageName: "mysql:test", MaxSwitchoverDelay: 3600, Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")}}}
	if withStore {
		c.Spec.Backup = &v1.BackupConfiguration{ObjectStore: w.store.Config("s3", "ctl", false)}
	}
	w.Create(c)
	c.Status.CurrentPrimary, c.Status.LatestGeneratedNode = name+"-1", 1
	w.UpdateStatus(c)
	if withStore {
		w.claimLocation(name)
	}
}

// claimLocation runs the operator's location reconciler on the Cluster: it writes the marker in
// the real store and records the claim, as it does before any backup.
func (w *bkWorld) claimLocation(name string) {
	w.T.Helper()
	w.ClaimLocation(name, nil)
	if c := ctrlworld.Get[v1.Cluster](w.World, name); !c.HoldsObjectStoreLocation() {
		w.T.Fatalf("Cluster %s does not hold its location: %+v", name, c.Status.ObjectStoreLocation)
	}
}

// createReadyPod creates the instance Pod name of cluster, running and ready.
func (w *bkWorld) createReadyPod(name, cluster string) {
	w.T.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS,
		Labels: map[string]string{v1.ClusterLabel: cluster, v1.InstanceLabel: name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysql", Image: "mysql:test"}}}}
	w.Create(p)
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	w.UpdateStatus(p)
}

// reconciler is a fresh reconciler, as after an operator restart.
func (w *bkWorld) reconciler() *backup.Reconciler {
	return &backup.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder,
		Clock: w.Clock, Instances: bkReports{w}, OperatorImage: "operator:test"}
}

func (w *bkWorld) reconcile(name string) ctrl.Result {
	w.T.Helper()
	res, err := w.reconciler().Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key(name)})
	if err != nil {
		w.T.Fatalf("reconcile %s: %v", name, err)
	}
	return res
}

func (w *bkWorld) createBackup(name, cluster string, timeout time.Duration) {
	w.T.Helper()
	w.Create(&v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: cluster}, Timeout: &metav1.Duration{Duration: timeout}}})
}

func (w *bkWorld) backup(name string) *v1.Backup { return ctrlworld.Get[v1.Backup](w.World, name) }

// job returns the Backup's Job, nil when it does not exist.
func (w *bkWorld) job(name string) *batchv1.Job {
	w.T.Helper()
	var j batchv1.Job
	err := w.Client.Get(w.Ctx, w.Key(name), &j)
	if apierrors.IsNotFound(err) {
		return nil
	}
	check.Must(w.T, err)
	return &j
}

// runUntil reconciles name until its phase is want.
func (w *bkWorld) runUntil(name string, want v1.BackupPhase) *v1.Backup {
	w.T.Helper()
	for range 5 {
		w.reconcile(name)
		if b := w.backup(name); b.Status.Phase == want {
			return b
		}
	}
	b := w.backup(name)
	w.T.Fatalf("Backup %s is %q (%s), want %q", name, b.Status.Phase, b.Status.Error, want)
	return nil
}

// finishPod plays the kubelet for the Backup's Job (ctrlworld.FinishJobPod).
func (w *bkWorld) finishPod(job string, phase corev1.PodPhase, msg string) {
	w.T.Helper()
	w.FinishJobPod(job, "backup", phase, msg)
}

// events drains the recorded Events, one a line.
func (w *bkWorld) events() string { return strings.Join(w.Events(), "\n") }
