package instancemetrics

import (
	"context"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// GatherTimeout bounds reading the facts of one scrape (mysqld's counters are read then).
const GatherTimeout = 3 * time.Second

// Collector exports Series of the Facts Gather returns at each scrape. It is an unchecked
// collector (Describe sends nothing): which series exist depends on the instance's state.
type Collector struct {
	Gather func(ctx context.Context) Facts
}

// Describe sends nothing: the series vary with the instance's role and mysqld's answer.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect gathers the facts and sends their series.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), GatherTimeout)
	defer cancel()
	for _, s := range Series(c.Gather(ctx)) {
		keys := make([]string, 0, len(s.Labels))
		for k := range s.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		values := make([]string, len(keys))
		for i, k := range keys {
			values[i] = s.Labels[k]
		}
		desc := prometheus.NewDesc(s.Name, s.Help, keys, nil)
		m, err := prometheus.NewConstMetric(desc, s.Type, s.Value, values...)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(desc, err)
			continue
		}
		ch <- m
	}
}
