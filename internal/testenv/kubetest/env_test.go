package kubetest

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

var shared = NewShared(Options{ControllerManager: true})

func TestMain(m *testing.M) { shared.Main(m) }

// eventually waits up to a minute for cond, showing kube-controller-manager's log on failure.
func eventually(t *testing.T, env *Env, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	check.Eventually(t, time.Minute, what, cond, env.ControllerManagerLog)
}

func TestCRDsAreInstalled(t *testing.T) {
	env := shared.Get(t)
	ns := env.NewNamespace(t)
	var list mysqlv1alpha1.ClusterList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing Clusters: %v", err)
	}
	for _, l := range []client.ObjectList{&mysqlv1alpha1.BackupList{}, &mysqlv1alpha1.ScheduledBackupList{}} {
		if err := env.Client.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			t.Fatalf("listing %T: %v", l, err)
		}
	}
}

func TestGarbageCollectorRemovesDependents(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}}}
	if err := env.Client.Create(ctx, dependent); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	eventually(t, env, "the garbage collector deletes the dependent", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

func TestJobControllerCreatesPods(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: ns},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "example.invalid/none"}},
		}}},
	}
	if err := env.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	eventually(t, env, "the Job controller creates the Job's Pod", func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"job-name": "job"})
		return len(pods.Items) == 1, err
	})
}

func TestEndpointSliceFollowsReadyPods(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "x"},
			Ports: []corev1.ServicePort{{Name: "mysql", Port: 3306, TargetPort: intstr.FromInt32(3306)}}},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, Labels: map[string]string{"app": "x"}},
		Spec:       corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "c", Image: "x"}}},
	}
	if err := env.EnsureNode(ctx, "node"); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{svc, pod} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7", PodIPs: []corev1.PodIP{{IP: "10.0.0.7"}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if err := env.Client.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, env, "an EndpointSlice lists the ready Pod", func(ctx context.Context) (bool, error) {
		var slices discoveryv1.EndpointSliceList
		if err := env.Client.List(ctx, &slices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: "svc"}); err != nil {
			return false, err
		}
		for _, s := range slices.Items {
			for _, ep := range s.Endpoints {
				if ep.TargetRef != nil && ep.TargetRef.Name == "p" && ptr.Deref(ep.Conditions.Ready, false) {
					return true, nil
				}
			}
		}
		return false, nil
	})
}
