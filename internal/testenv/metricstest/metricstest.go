package metricstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Of is g narrowed to the series whose labels include every pair of labels (a namespace and a
// Cluster, say): tests sharing a registry read their own series only.
func Of(g prometheus.Gatherer, labels map[string]string) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		families, err := g.Gather()
		var out []*dto.MetricFamily
		for _, f := range families {
			var kept []*dto.Metric
			for _, m := range f.GetMetric() {
				if carries(m, labels) {
					kept = append(kept, m)
				}
			}
			if len(kept) > 0 {
				out = append(out, &dto.MetricFamily{Name: f.Name, Help: f.Help, Type: f.Type, Metric: kept})
			}
		}
		return out, err
	})
}

func carries(m *dto.Metric, labels map[string]string) bool {
	found := 0
	for _, p := range m.GetLabel() {
		if v, ok := labels[p.GetName()]; ok {
			if v != p.GetValue() {
				return false
			}
			found++
		}
	}
	return found == len(labels)
}

// Value is the value of the series of name among g's carrying labels, summed over those that
// match: a counter's or a gauge's value, a histogram's sample count. ok is false when no series
// matches.
func Value(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string) (v float64, ok bool) {
	t.Helper()
	families, err := Of(g, labels).Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			ok = true
			switch {
			case m.Counter != nil:
				v += m.Counter.GetValue()
			case m.Gauge != nil:
				v += m.Gauge.GetValue()
			case m.Histogram != nil:
				v += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return v, ok
}

// HistogramSum is the sum of the observations of the histogram name among g's series carrying
// labels.
func HistogramSum(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := Of(g, labels).Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	sum := 0.0
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == name && m.Histogram != nil {
				sum += m.Histogram.GetSampleSum()
			}
		}
	}
	return sum
}

// ClusterValue is the value of the series name of the Cluster namespace/cluster in
// controller-runtime's registry, with the extra label pairs (name, value, ...); -1 when there is
// none.
func ClusterValue(t testing.TB, namespace, cluster, name string, extra ...string) float64 {
	t.Helper()
	l := map[string]string{"namespace": namespace, "cluster": cluster}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	v, ok := Value(t, ctrlmetrics.Registry, name, l)
	if !ok {
		return -1
	}
	return v
}
