package operator_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// TestManagerCachesOnlyItsObjects runs a manager with the operator's cache and client options
// (kit.CacheOptions, kit.ClientOptions, as operator.NewManager) against the real API server beside
// objects that are not the operator's (finding 8 of the security review: unbounded caches of every
// Pod and Secret in the cluster). Its cache holds only the Pods carrying the Cluster label, without
// managedFields, and its client still reads any Secret, from the API server rather than from an
// informer holding them all (bench/operatormemory measures what this saves).
func TestManagerCachesOnlyItsObjects(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	ns := env.NewNamespace(t)
	ctx := t.Context()
	const unrelated = 25
	for i := range unrelated {
		check.Must(t, env.Client.Create(ctx, pod(ns, fmt.Sprintf("other-%d", i), nil)))
		check.Must(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("other-%d", i)},
			StringData: map[string]string{"k": "v"}}))
	}
	check.Must(t, env.Client.Create(ctx, pod(ns, "db-1", map[string]string{v1.ClusterLabel: "db"})))

	// The options operator.NewManager builds its manager with; a second manager with the
	// operator's controllers cannot be built in this process (controller names are unique).
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: operator.NewScheme(),
		Metrics: metricsserver.Options{BindAddress: "0"}, Cache: kit.CacheOptions(), Client: kit.ClientOptions()})
	check.Must(t, err)
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with %v", err)
		}
	}()
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		t.Fatal("the manager's cache did not sync")
	}

	var pods corev1.PodList
	check.Eventually(t, 20*time.Second, "the labelled Pod in the cache", check.True(func() bool {
		return mgr.GetClient().List(ctx, &pods, client.InNamespace(ns)) == nil && len(pods.Items) > 0
	}))
	if len(pods.Items) != 1 || pods.Items[0].Name != "db-1" {
		names := []string{}
		for _, p := range pods.Items {
			names = append(names, p.Name)
		}
		t.Errorf("the cache holds Pods %v; want only db-1 of the %d in the namespace", names, unrelated+1)
	}
	for _, p := range pods.Items {
		if len(p.ManagedFields) > 0 {
			t.Errorf("cached Pod %s keeps %d managedFields entries", p.Name, len(p.ManagedFields))
		}
	}
	var s corev1.Secret
	if err := mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: ns, Name: "other-7"}, &s); err != nil || string(s.Data["k"]) != "v" {
		t.Errorf("reading an unlabelled Secret through the manager's client: %v, data %v", err, s.Data)
	}
}

func pod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}
}
