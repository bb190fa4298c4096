package controller_test

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
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// bkWorld is a namespace on the real API server (with kube-controller-manager running the Job
// controller and the garbage collector) holding a Cluster "db" whose object store is a real
// versitygw, three ready instance Pods, and instance reports injected where the instance managers
// would answer. The test plays the kubelet: it sets the phase of the Job's Pod.
type bkWorld struct {
	t        *testing.T
	ctx      context.Context
	env      *kubetest.Env
	ns       string
	s3       *s3test.Server
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
	reports  map[string]*instanceclient.Status
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
	e := controlPlane(t)
	w := &bkWorld{t: t, ctx: context.Background(), env: e, ns: e.NewNamespace(t), s3: s3test.Start(t),
		clock: clocktesting.NewFakeClock(time.Now()), recorder: record.NewFakeRecorder(1000),
		reports: map[string]*instanceclient.Status{
			"db-1": {Instance: "db-1", Role: v1.RolePrimary},
			"db-2": {Instance: "db-2", Role: v1.RoleReplica, Replication: &instanceclient.ReplicationStatus{IORunning: true, SQLRunning: true, LagSeconds: 30}},
			"db-3": {Instance: "db-3", Role: v1.RoleReplica, Replication: &instanceclient.ReplicationStatus{IORunning: true, SQLRunning: true, LagSeconds: 1}},
		}}
	w.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3", Namespace: w.ns},
		Data: map[string][]byte{"id": []byte(w.s3.AccessKey), "secret": []byte(w.s3.SecretKey + "\n")}})
	w.createCluster("db", true)
	for _, name := range []string{"db-1", "db-2", "db-3"} {
		w.createReadyPod(name)
	}
	return w
}

func (w *bkWorld) create(obj client.Object) {
	w.t.Helper()
	if err := w.env.Client.Create(w.ctx, obj); err != nil {
		w.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func (w *bkWorld) createCluster(name string, withStore bool) {
	w.t.Helper()
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: v1.ClusterSpec{Instances: 3, ImageName: "mysql:test", MaxSwitchoverDelay: 3600, Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")}}}
	if withStore {
		c.Spec.Backup = &v1.BackupConfiguration{ObjectStore: &v1.ObjectStoreConfiguration{
			Bucket: w.s3.Bucket, Path: "ctl", Endpoint: w.s3.Endpoint, Region: w.s3.Region, ForcePathStyle: true,
			Credentials: v1.S3Credentials{AccessKeyID: v1.SecretKeySelector{Name: "s3", Key: "id"},
				SecretAccessKey: v1.SecretKeySelector{Name: "s3", Key: "secret"}}}}
	}
	w.create(c)
	c.Status.CurrentPrimary = name + "-1"
	if err := w.env.Client.Status().Update(w.ctx, c); err != nil {
		w.t.Fatalf("setting the Cluster status: %v", err)
	}
}

func (w *bkWorld) createReadyPod(name string) {
	w.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns,
		Labels: map[string]string{v1.ClusterLabel: "db", v1.InstanceLabel: name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysql", Image: "mysql:test"}}}}
	w.create(p)
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if err := w.env.Client.Status().Update(w.ctx, p); err != nil {
		w.t.Fatalf("setting Pod %s ready: %v", name, err)
	}
}

// reconciler is a fresh reconciler, as after an operator restart.
func (w *bkWorld) reconciler() *controller.BackupReconciler {
	return &controller.BackupReconciler{Client: w.env.Client, APIReader: w.env.Client, Recorder: w.recorder,
		Clock: w.clock, Instances: bkReports{w}, OperatorImage: "operator:test"}
}

func (w *bkWorld) reconcile(name string) ctrl.Result {
	w.t.Helper()
	res, err := w.reconciler().Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: w.ns, Name: name}})
	if err != nil {
		w.t.Fatalf("reconcile %s: %v", name, err)
	}
	return res
}

func (w *bkWorld) createBackup(name, cluster string, timeout time.Duration) {
	w.t.Helper()
	w.create(&v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: cluster}, Timeout: &metav1.Duration{Duration: timeout}}})
}

func (w *bkWorld) backup(name string) *v1.Backup {
	w.t.Helper()
	var b v1.Backup
	if err := w.env.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, &b); err != nil {
		w.t.Fatalf("reading Backup %s: %v", name, err)
	}
	return &b
}

// job returns the Backup's Job, nil when it does not exist.
func (w *bkWorld) job(name string) *batchv1.Job {
	w.t.Helper()
	var j batchv1.Job
	err := w.env.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, &j)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return &j
}

// runUntil reconciles name until its phase is want.
func (w *bkWorld) runUntil(name string, want v1.BackupPhase) *v1.Backup {
	w.t.Helper()
	for range 5 {
		w.reconcile(name)
		if b := w.backup(name); b.Status.Phase == want {
			return b
		}
	}
	b := w.backup(name)
	w.t.Fatalf("Backup %s is %q (%s), want %q", name, b.Status.Phase, b.Status.Error, want)
	return nil
}

// eventually polls cond for up to 30 s.
func (w *bkWorld) eventually(what string, cond func(ctx context.Context) (bool, error)) {
	w.t.Helper()
	if err := wait.PollUntilContextTimeout(w.ctx, 100*time.Millisecond, 30*time.Second, true, cond); err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
}

// finishPod plays the kubelet: the Job's Pod ends in phase with the termination message msg, and
// the Job controller turns that into the Job's condition.
func (w *bkWorld) finishPod(job string, phase corev1.PodPhase, msg string) {
	w.t.Helper()
	var pod corev1.Pod
	w.eventually("the Job controller creates the Pod of "+job, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := w.env.Client.List(ctx, &pods, client.InNamespace(w.ns), client.MatchingLabels{batchv1.JobNameLabel: job}); err != nil {
			return false, err
		}
		if len(pods.Items) == 0 {
			return false, nil
		}
		pod = pods.Items[0]
		return true, nil
	})
	exit := int32(0)
	if phase == corev1.PodFailed {
		exit = 1
	}
	pod.Status.Phase = phase
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "backup", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Message: msg, Reason: "Completed"}}}}
	if err := w.env.Client.Status().Update(w.ctx, &pod); err != nil {
		w.t.Fatalf("setting the Pod phase: %v", err)
	}
	cond := batchv1.JobComplete
	if phase == corev1.PodFailed {
		cond = batchv1.JobFailed
	}
	w.eventually("the Job controller marks "+job+" "+string(cond), func(ctx context.Context) (bool, error) {
		j := w.job(job)
		for _, c := range j.Status.Conditions {
			if c.Type == cond && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// events drains the recorded Events.
func (w *bkWorld) events() string {
	var out []string
	for {
		select {
		case e := <-w.recorder.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}
