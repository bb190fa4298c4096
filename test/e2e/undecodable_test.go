//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// undecodableCluster cannot be read by the operator's Go types (a quantity that does not parse).
// This build's schema refuses it; a looser, older one stored it.
const undecodableCluster = `{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Cluster, metadata: {name: stored-before},
  spec: {instances: 1, storage: {size: 1Gi}, resources: {limits: {example.com/x: "1e1.5"}}}}`

// storeUndecodableAndRestartOperator stores undecodableCluster in a namespace of its own (the
// Cluster CRD's resources schema loosened for the write, then restored), restarts the operator
// beside it and waits for the new operator Pod to be available. It returns the namespace.
func storeUndecodableAndRestartOperator(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	ns := Namespace(t)
	crdGVK := schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	key := client.ObjectKey{Name: "clusters." + mysqlv1.GroupVersion.Group}
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdGVK)
	if err := env.c.Get(ctx, key, crd); err != nil {
		t.Fatal(err)
	}
	original, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	setVersions := func(versions []any) error {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(crdGVK)
		if err := env.c.Get(ctx, key, cur); err != nil {
			return err
		}
		if err := unstructured.SetNestedSlice(cur.Object, versions, "spec", "versions"); err != nil {
			return err
		}
		return env.c.Update(ctx, cur)
	}
	t.Cleanup(func() {
		if err := setVersions(original); err != nil {
			t.Errorf("restoring the Cluster CRD: %v", err)
		}
	})
	loose := crd.DeepCopy()
	versions, _, _ := unstructured.NestedSlice(loose.Object, "spec", "versions")
	if err := unstructured.SetNestedField(versions[0].(map[string]any), map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
		"schema", "openAPIV3Schema", "properties", "spec", "properties", "resources"); err != nil {
		t.Fatal(err)
	}
	if err := setVersions(versions); err != nil {
		t.Fatalf("loosening the Cluster CRD: %v", err)
	}
	bad := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(undecodableCluster), &bad.Object); err != nil {
		t.Fatal(err)
	}
	bad.SetNamespace(ns)
	WaitFor(t, 30*time.Second, "the loosened schema to admit the undecodable Cluster", func() (bool, error) {
		err := env.c.Create(ctx, bad.DeepCopy())
		return err == nil, err
	})
	if err := setVersions(original); err != nil {
		t.Fatalf("restoring the Cluster CRD: %v", err)
	}
	WaitFor(t, 30*time.Second, "the restored schema to refuse it again", func() (bool, error) {
		probe := bad.DeepCopy()
		probe.SetName("refused-again")
		err := env.c.Create(ctx, probe, client.DryRunAll)
		return apierrors.IsInvalid(err), err
	})
	if out, err := kubectl("-n", operatorNamespace, "rollout", "restart", "deploy/"+operatorDeployment); err != nil {
		t.Fatalf("restarting the operator: %v\n%s", err, out)
	}
	if out, err := kubectl("-n", operatorNamespace, "rollout", "status", "deploy/"+operatorDeployment, "--timeout=180s"); err != nil {
		t.Fatalf("the restarted operator: %v\n%s", err, out)
	}
	return ns
}

// checkUndecodableReported waits for the Warning Event Undecodable on the stored Cluster of ns.
func checkUndecodableReported(t *testing.T, ns string) {
	t.Helper()
	WaitFor(t, time.Minute, "a Warning Event Undecodable on the stored Cluster", func() (bool, error) {
		var events corev1.EventList
		if err := env.c.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Reason == "Undecodable" && e.InvolvedObject.Name == "stored-before" && strings.Contains(e.Message, "cannot decode") {
				return true, nil
			}
		}
		return false, nil
	})
}
