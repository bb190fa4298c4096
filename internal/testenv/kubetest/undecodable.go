package kubetest

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// StoreUndecodable stores obj, which this build's schema refuses and its Go types cannot decode,
// the way an older, looser schema once stored it: the CRD named plural.<group> gets, at the
// property path given from the schema's root ("spec", "resources"), a schema that admits
// anything; obj is created; the CRD is restored, and the API server refuses obj again before
// StoreUndecodable returns. The CRD is restored at the end of the test should it fail in
// between. c may be any client of the API server (envtest or a real node). Only spec values: a
// status the schema refuses is kept on update (validation ratcheting), so no probe could show the
// restored schema in force.
func StoreUndecodable(t testing.TB, c client.Client, plural string, obj *unstructured.Unstructured, path ...string) {
	t.Helper()
	ctx := context.Background()
	gvk := schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	key := client.ObjectKey{Name: plural + "." + obj.GroupVersionKind().Group}
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(gvk)
	check.Must(t, c.Get(ctx, key, crd))
	original, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	check.Must(t, err)
	setVersions := func(versions []any) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &unstructured.Unstructured{}
			cur.SetGroupVersionKind(gvk)
			if err := c.Get(ctx, key, cur); err != nil {
				return err
			}
			if err := unstructured.SetNestedSlice(cur.Object, versions, "spec", "versions"); err != nil {
				return err
			}
			return c.Update(ctx, cur)
		})
	}
	restored := false
	restore := func() {
		if restored {
			return
		}
		if err := setVersions(original); err != nil {
			t.Errorf("restoring CRD %s: %v", key.Name, err)
			return
		}
		restored = true
	}
	t.Cleanup(restore)

	loose := crd.DeepCopy()
	versions, _, _ := unstructured.NestedSlice(loose.Object, "spec", "versions")
	fields := []string{"schema", "openAPIV3Schema"}
	for _, p := range path {
		fields = append(fields, "properties", p)
	}
	check.Must(t, unstructured.SetNestedField(versions[0].(map[string]any),
		map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, fields...))
	check.Must(t, setVersions(versions))

	check.Eventually(t, 30*time.Second, "the loosened schema to admit "+obj.GetName(), func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, obj.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			return true, nil // a create whose answer was lost
		}
		if apierrors.IsInvalid(err) {
			return false, nil // the loosened schema is not in force yet
		}
		return err == nil, err
	})
	restore()
	check.Eventually(t, 30*time.Second, "the restored schema to refuse "+obj.GetName()+" again", func(ctx context.Context) (bool, error) {
		probe := obj.DeepCopy()
		probe.SetName(obj.GetName() + "-probe")
		return apierrors.IsInvalid(c.Create(ctx, probe, client.DryRunAll)), nil
	})
}

// UndecodableCluster is a Cluster of namespace the Go types cannot decode (a resources quantity
// that does not parse, which this build's schema refuses): store it with StoreUndecodable at
// UndecodableClusterPath. A non-empty recoveryBackup makes it bootstrap from that Backup.
func UndecodableCluster(namespace, name, recoveryBackup string) *unstructured.Unstructured {
	spec := map[string]any{"instances": int64(1), "storage": map[string]any{"size": "1Gi"},
		"resources": map[string]any{"limits": map[string]any{"example.com/x": "1e1.5"}}}
	if recoveryBackup != "" {
		spec["bootstrap"] = map[string]any{"recovery": map[string]any{"backup": map[string]any{"name": recoveryBackup}}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "mysql.cloudnative-mysql.io/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     spec,
	}}
}

// UndecodableClusterPath is where the Clusters CRD is loosened to store UndecodableCluster.
var UndecodableClusterPath = []string{"spec", "resources"}
