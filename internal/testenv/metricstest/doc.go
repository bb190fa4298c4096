// Package metricstest reads the series of one object from a Prometheus registry in tests: a
// Gatherer narrowed to the series carrying given labels, for prometheus/testutil to count and
// compare, and the value of one metric among them.
package metricstest
