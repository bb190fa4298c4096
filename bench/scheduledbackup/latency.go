package main

import (
	"context"
	"net/url"
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

func registerLatencyMetric() {
	crmetrics.Registry.MustRegister(requestLatency)
	clientmetrics.RequestLatency = latencyAdapter{}
}
