//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// storeUndecodableAndRestartOperator stores kubetest.UndecodableCluster "stored-before" in a namespace of its own (the
// Cluster CRD's resources schema loosened for the write, then restored), restarts the operator
// beside it and waits for the new operator Pod to be available. It returns the namespace.
func storeUndecodableAndRestartOperator(t *testing.T) string {
	t.Helper()
	ns := Namespace(t)
	kubetest.StoreUndecodable(t, env.c, "clusters", kubetest.UndecodableCluster(ns, "stored-before", ""), kubetest.UndecodableClusterPath...)
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
