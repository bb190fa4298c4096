package admission_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// undecodableCluster is a Cluster the Go types cannot read: a quantity that does not parse. The
// schema of this build refuses it; one stored under an older, looser schema stays stored.
const undecodableCluster = `{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Cluster, metadata: {name: stored-before},
  spec: {instances: 1, storage: {size: 1Gi}, resources: {limits: {example.com/x: "1e1.5"}}}}`

// TestOperatorStartsBesideAClusterItCannotDecode stores a Cluster the operator cannot decode (the
// Cluster CRD's resources schema loosened for the write, as an older build's was, then restored),
// then starts the operator twice beside it: each time a healthy Cluster in another namespace is
// reconciled, and the undecodable one is reported with a Warning Event.
func TestOperatorStartsBesideAClusterItCannotDecode(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	badNS, healthyNS := env.NewNamespace(t), env.NewNamespace(t)
	storeUndecodable(t, env, badNS)

	ctrl.SetLogger(zap.New(zap.WriteTo(testWriter{t})))
	for i, name := range []string{"first", "restarted"} {
		stop := startOperator(t, env)
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
		if i == 0 {
			check.Eventually(t, time.Minute, "a Warning Event Undecodable on the stored Cluster", func(ctx context.Context) (bool, error) {
				var events corev1.EventList
				if err := env.Client.List(ctx, &events, client.InNamespace(badNS)); err != nil {
					return false, err
				}
				for _, e := range events.Items {
					if e.Reason == "Undecodable" && e.InvolvedObject.Name == "stored-before" && e.InvolvedObject.Kind == "Cluster" {
						return true, nil
					}
				}
				return false, nil
			})
		}
		stop()
	}
}

// storeUndecodable writes undecodableCluster into ns under a loosened Cluster CRD, and restores
// the CRD before returning (and at the end of the test, should it fail in between).
func storeUndecodable(t *testing.T, env *kubetest.Env, ns string) {
	t.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	key := client.ObjectKey{Name: "clusters." + v1.GroupVersion.Group}
	check.Must(t, env.Client.Get(ctx, key, crd))
	original, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	check.Must(t, err)
	restore := func() {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(crd.GroupVersionKind())
		if err := env.Client.Get(ctx, key, cur); err != nil {
			t.Errorf("reading the Cluster CRD to restore it: %v", err)
			return
		}
		if err := unstructured.SetNestedSlice(cur.Object, original, "spec", "versions"); err != nil {
			t.Error(err)
			return
		}
		if err := env.Client.Update(ctx, cur); err != nil {
			t.Errorf("restoring the Cluster CRD: %v", err)
		}
	}
	t.Cleanup(restore)

	loose := crd.DeepCopy()
	versions, _, _ := unstructured.NestedSlice(loose.Object, "spec", "versions")
	version := versions[0].(map[string]any)
	check.Must(t, unstructured.SetNestedField(version, map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
		"schema", "openAPIV3Schema", "properties", "spec", "properties", "resources"))
	check.Must(t, unstructured.SetNestedSlice(loose.Object, versions, "spec", "versions"))
	check.Must(t, env.Client.Update(ctx, loose))

	bad := decode(t, undecodableCluster)
	bad.SetNamespace(ns)
	check.Eventually(t, 30*time.Second, "the loosened schema to admit the undecodable Cluster", func(ctx context.Context) (bool, error) {
		err := env.Client.Create(ctx, bad.DeepCopy())
		if apierrors.IsInvalid(err) {
			return false, nil
		}
		return err == nil, err
	})
	restore()
	probe := decode(t, strings.Replace(undecodableCluster, "stored-before", "refused-again", 1))
	probe.SetNamespace(ns)
	check.Eventually(t, 30*time.Second, "the restored schema to refuse the undecodable Cluster", func(ctx context.Context) (bool, error) {
		err := env.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return apierrors.IsInvalid(err), nil
	})
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
