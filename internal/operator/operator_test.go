package operator_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func httpGet(ctx context.Context, url string) (int, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestManagerElectsLeaderAndServesProbesAndMetrics runs the operator's manager against the real
// API server as its ServiceAccount with the RBAC of config/rbac: it must take the leader Lease,
// serve /healthz and /readyz, and serve /metrics over HTTPS to authorised callers only.
func TestManagerElectsLeaderAndServesProbesAndMetrics(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	ns := env.NewNamespace(t)
	asOperator, reader, stranger := metricsAccount(t, env)
	probes, metrics := freeAddr(t), freeAddr(t)
	mgr, err := operator.NewManager(asOperator, operator.Options{
		MetricsBindAddress:      metrics,
		HealthProbeBindAddress:  probes,
		LeaderElection:          true,
		LeaderElectionNamespace: ns,
	})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with %v", err)
		}
	}()

	waitCtx, waitCancel := context.WithTimeout(ctx, 60*time.Second)
	defer waitCancel()
	var lease coordinationv1.Lease
	err = wait.PollUntilContextCancel(waitCtx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: operator.LeaderElectionID}, &lease)
		return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("the manager did not take the leader Lease %s/%s: %v", ns, operator.LeaderElectionID, err)
	}

	for _, c := range []struct{ url, want string }{
		{fmt.Sprintf("http://%s/healthz", probes), "ok"},
		{fmt.Sprintf("http://%s/readyz", probes), "ok"},
	} {
		var code int
		var body string
		err := wait.PollUntilContextCancel(waitCtx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			code, body, err = httpGet(ctx, c.url)
			return err == nil && code == http.StatusOK, nil
		})
		if err != nil {
			t.Fatalf("GET %s: status %d, %v", c.url, code, err)
		}
		if !strings.Contains(body, c.want) {
			t.Errorf("GET %s: body lacks %q", c.url, c.want)
		}
	}
	checkMetricsAccess(t, metrics, reader, stranger, "leader_election_master_status")
}
