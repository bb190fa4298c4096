// Package monitoring holds the checks of the monitoring configuration. Its dashboard files check
// the generated Grafana dashboard (config/monitoring/grafana-dashboard.json): it decodes into the
// Grafana Foundation SDK's type, its layout and variables, and every query parsed by the
// Prometheus parser against the metric contract. dashboard_queries.go lists the dashboard's
// queries for other suites, such as one that runs them against a real Prometheus.
package monitoring
