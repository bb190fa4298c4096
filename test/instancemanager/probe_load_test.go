package instancemanager

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// probeFloodClients and probeFloodDuration: the load of issue 27, item 8, shortened from 90 s.
const (
	probeFloodClients  = 256
	probeFloodDuration = 15 * time.Second
)

// TestProbeLoadStartsNoFailover floods the primary's probe port while the Cluster reconciler and
// a fake kubelet (probing readiness every 200 ms, so one failed answer turns the Pod not ready)
// watch it: a healthy primary under that load stays ready and no failover starts.
func TestProbeLoadStartsNoFailover(t *testing.T) {
	w := startOperatorWorld(t)
	steps := []step[*operatorWorld]{
		{"the operator creates the Pods and the Cluster becomes Ready", testOperatorComeUp},
		{"256 requests in flight on the primary's probe port: it stays ready, no failover starts", testProbeFlood},
	}
	runSteps(t, w, steps, w.explain)
}

func testProbeFlood(t *testing.T, o *operatorWorld) {
	n := o.nodes["db-1"]
	url := "http://" + net.JoinHostPort(n.host, strconv.Itoa(n.probes)) + "/readyz"
	ctx, cancel := context.WithTimeout(t.Context(), probeFloodDuration)
	defer cancel()
	var answers, notOK atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: probeFloodClients}, Timeout: 5 * time.Second}
	for range probeFloodClients {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						notOK.Add(1)
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answers.Add(1)
				if resp.StatusCode != http.StatusOK {
					notOK.Add(1)
				}
			}
		})
	}
	var samples, unready, failing int
	for ctx.Err() == nil {
		c := o.cluster(t)
		st := c.Status
		if !st.PrimaryFailingSince.IsZero() || st.CurrentPrimary != "db-1" || st.TargetPrimary != "db-1" {
			if failing++; failing == 1 {
				t.Errorf("during the flood: currentPrimary %q, targetPrimary %q, primaryFailingSince %v; want db-1 healthy",
					st.CurrentPrimary, st.TargetPrimary, st.PrimaryFailingSince)
			}
		}
		if p := o.pod(t, "db-1"); p == nil || len(p.Status.Conditions) != 1 || p.Status.Conditions[0].Type != corev1.PodReady ||
			p.Status.Conditions[0].Status != corev1.ConditionTrue {
			unready++
		}
		samples++
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	wg.Wait()
	t.Logf("%d readiness answers on the flood, %d not 200; %d samples of the Cluster, the primary's Pod not ready in %d, failing in %d",
		answers.Load(), notOK.Load(), samples, unready, failing)
	if notOK.Load() > 0 {
		t.Errorf("%d of the flood's readiness requests failed or were not 200", notOK.Load())
	}
	if unready > 0 {
		t.Errorf("the primary's Pod was not ready in %d of %d samples", unready, samples)
	}
	if answers.Load() < probeFloodClients {
		t.Errorf("only %d answers: the flood did not run", answers.Load())
	}
}
