package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// requestLatency is exported by the benchmark's operator process only, so the report can say how
// long the API server took per verb (controller-runtime does not register it).
var requestLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "rest_client_request_duration_seconds",
	Help:    "Request latency by verb, as the operator's client saw it.",
	Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
}, []string{"verb"})

type latencyAdapter struct{}

func (latencyAdapter) Observe(_ context.Context, verb string, _ url.URL, latency time.Duration) {
	requestLatency.WithLabelValues(verb).Observe(latency.Seconds())
}

// createLateness is, for each Backup the operator created, the time from its slot to the API
// server's answer to the create, as the operator saw it: the lateness without the delay of the
// observer's watch.
var createLateness = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "bench_backup_create_lateness_seconds",
	Help:    "Time from a Backup's slot to the answer to its create, as the operator saw it.",
	Buckets: prometheus.LinearBuckets(0.05, 0.05, 240),
})

func registerLatencyMetric() {
	crmetrics.Registry.MustRegister(requestLatency, createLateness)
	clientmetrics.RequestLatency = latencyAdapter{}
}

// createTimer observes createLateness for every Backup created through it.
type createTimer struct{ next http.RoundTripper }

func (t createTimer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || resp.StatusCode != http.StatusCreated ||
		!strings.HasSuffix(req.URL.Path, "/backups") {
		return resp, err
	}
	answered := time.Now()
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var created struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	if json.Unmarshal(body, &created) == nil {
		if slot, ok := slotOfName(created.Metadata.Name); ok {
			createLateness.Observe(answered.Sub(slot).Seconds())
		}
	}
	return resp, nil
}
