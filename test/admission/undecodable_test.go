package admission_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// TestOperatorStartsBesideAClusterItCannotDecode stores a Cluster the operator cannot decode (as
// an older, looser schema did), starts the operator beside it, stores a second one while it runs
// (its watch event does not decode either), and restarts the operator: after each step a new
// healthy Cluster in another namespace is reconciled, and both undecodable ones are reported with
// a Warning Event.
func TestOperatorStartsBesideAClusterItCannotDecode(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	badNS, healthyNS := env.NewNamespace(t), env.NewNamespace(t)
	storeBad := func(name string) {
		kubetest.StoreUndecodable(t, env.Client, "clusters", kubetest.UndecodableCluster(badNS, name, ""), kubetest.UndecodableClusterPath...)
	}
	reconciled := func(name string) {
		t.Helper()
		healthy := decode(t, strings.ReplaceAll(validCluster, "%NAME%", name))
		healthy.SetNamespace(healthyNS)
		if err := env.Client.Create(ctx, healthy); err != nil {
			t.Fatalf("creating the healthy Cluster %s: %v", name, err)
		}
		check.Eventually(t, time.Minute, "the healthy Cluster "+name+" has its rw Service and a status", func(ctx context.Context) (bool, error) {
			var svc corev1.Service
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: healthyNS, Name: name + "-rw"}, &svc); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			var c v1.Cluster
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: healthyNS, Name: name}, &c); err != nil {
				return false, err
			}
			return c.Status.TargetPrimary != "", nil
		})
	}
	reported := func(name string) {
		t.Helper()
		check.Eventually(t, time.Minute, "a Warning Event Undecodable on "+name, func(ctx context.Context) (bool, error) {
			var events corev1.EventList
			if err := env.Client.List(ctx, &events, client.InNamespace(badNS)); err != nil {
				return false, err
			}
			for _, e := range events.Items {
				if e.Reason == "Undecodable" && e.InvolvedObject.Name == name && e.InvolvedObject.Kind == "Cluster" {
					return true, nil
				}
			}
			return false, nil
		})
	}

	ctrl.SetLogger(zap.New(zap.WriteTo(testWriter{t})))
	storeBad("stored-before")
	stop := startOperator(t, env)
	reconciled("first")
	reported("stored-before")
	storeBad("stored-while-running") // reaches the running operator as a watch event
	reconciled("second")
	reported("stored-while-running")
	stop()
	startOperator(t, env)
	reconciled("restarted")
}

// startOperator runs the operator's manager on env, watching every namespace; stop cancels it and
// waits for it to return.
func startOperator(t *testing.T, env *kubetest.Env) (stop func()) {
	t.Helper()
	mgr, err := operator.NewManager(env.Config, operator.Options{MetricsBindAddress: "0", HealthProbeBindAddress: "0", RepeatableInProcess: true})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		// A manager whose caches never sync (an object its informers cannot decode) does not
		// return once cancelled: the test fails instead of waiting for the package timeout.
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager stopped with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("the manager did not stop within 30s of its cancellation")
		}
	}
	t.Cleanup(stop)
	return stop
}
