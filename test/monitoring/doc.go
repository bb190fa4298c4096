// Package monitoring holds the tests of what config/monitoring gives Prometheus: the alert and
// recording rules (checked and unit-tested by the real promtool, each alert with a runbook in
// docs/monitoring.md and a firing and a quiet test case, on documented metrics only), the
// PrometheusRule generated from them, the PodMonitors and the plain scrape configuration (decoded
// strictly with prometheus-operator's API types, and held to the metrics contract: ports, TLS,
// token Secret, labels).
package monitoring
