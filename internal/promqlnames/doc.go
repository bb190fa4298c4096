// Package promqlnames finds what PromQL expressions read: each expression is parsed by the
// Prometheus parser, and the series selectors it contains (metric name, label matchers) come back.
// The parser runs as the small command of the tools module hack/tools/promql, which Build compiles,
// because the Prometheus module cannot join the operator's module graph (it requires newer
// Kubernetes libraries). Expand turns a Grafana query into PromQL first by substituting its
// template variables.
package promqlnames
