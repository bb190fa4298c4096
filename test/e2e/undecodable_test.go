//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
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
	ns := Namespace(t)
	bad := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(undecodableCluster), &bad.Object); err != nil {
		t.Fatal(err)
	}
	bad.SetNamespace(ns)
	kubetest.StoreUndecodable(t, env.c, "clusters", bad, "spec", "resources")
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
