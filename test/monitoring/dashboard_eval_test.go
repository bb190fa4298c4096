package monitoring

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/promqlnames"
)

// Values of the series scrape writes that are not 1 (gauges) or a rising count (counters); an
// offset from now for timestamps.
var (
	onFirstPod   = map[string]bool{"cnm_instance_primary": true, "cnm_lease_held": true}
	offFirstPod  = map[string]bool{"cnm_binlog_archive_standing_down": true}
	sinceNow     = map[string]float64{"cnm_certificate_expiry_timestamp_seconds": 30 * 86400, "cnm_backup_last_success_timestamp_seconds": -3600, "cnm_binlog_archive_last_segment_timestamp_seconds": -60}
	labelValue   = map[string]string{"stage": "upload", "certificate": "server", "result": "completed", "reason": "checksum", "kind": "failover", "controller": "cluster", "scheduledbackup": "daily", "name": "x"}
	bucketBounds = []string{"1", "5", "30", "+Inf"}
)

// scrape returns every series of the contract for one cluster of three instances (the first
// the primary) as Prometheus holds them after scraping: with the job and instance labels of
// the target, the operator's series with the operator's Pod.
func scrape(namespace, cluster string) []promqlnames.Series {
	var out []promqlnames.Series
	names := make([]string, 0, len(contract))
	for n := range contract {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		labels := contract[name]
		base := map[string]string{"__name__": name}
		for _, l := range labels {
			switch l {
			case "namespace":
				base[l] = namespace
			case "cluster":
				base[l] = cluster
			case "pod", "le":
			default:
				base[l] = labelValue[l]
			}
		}
		if !slices.Contains(labels, "pod") {
			base["job"], base["instance"], base["pod"] = "operator", "10.0.0.1:8443", "cloudnative-mysql-controller-manager-0"
			out = append(out, withBuckets(name, labels, base)...)
			continue
		}
		for i := 1; i <= 3; i++ {
			s := clone(base)
			s["pod"] = fmt.Sprintf("%s-%d", cluster, i)
			s["job"], s["instance"] = "instances", fmt.Sprintf("10.0.1.%d:9104", i)
			for _, series := range withBuckets(name, labels, s) {
				if onFirstPod[name] || offFirstPod[name] {
					series.Value = map[bool]float64{true: 1, false: 0}[(i == 1) == onFirstPod[name]]
				}
				out = append(out, series)
			}
		}
	}
	return out
}

// withBuckets is the series of one label set: a histogram bucket series once per bound, counts
// rising faster in wider buckets; a counter rising by one a sample; a timestamp at its offset
// from now; a gauge at 1.
func withBuckets(name string, labels []string, s map[string]string) []promqlnames.Series {
	switch {
	case slices.Contains(labels, "le"):
		var out []promqlnames.Series
		for i, le := range bucketBounds {
			b := clone(s)
			b["le"] = le
			out = append(out, promqlnames.Series{Labels: b, Increase: float64(i + 1)})
		}
		return out
	case strings.HasSuffix(name, "_total") || strings.HasSuffix(name, "_sum") || strings.HasSuffix(name, "_count"):
		return []promqlnames.Series{{Labels: s, Increase: 1}}
	case strings.HasSuffix(name, "_timestamp_seconds"):
		offset, ok := sinceNow[name]
		if !ok {
			offset = -600
		}
		return []promqlnames.Series{{Labels: s, Value: offset, SinceNow: true}}
	}
	return []promqlnames.Series{{Labels: s, Value: 1}}
}

func clone(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestDashboardQueriesReturnData runs every panel query with the Prometheus query engine over
// the contract's series of two clusters in two namespaces, once with one namespace and cluster
// selected and once with All: each returns data, without an evaluation error (such as a
// many-to-many match).
func TestDashboardQueriesReturnData(t *testing.T) {
	qs, err := Queries(loadDashboard(t))
	if err != nil {
		t.Fatal(err)
	}
	selections := []struct{ namespace, cluster string }{{"shop", "main"}, {".*", ".*"}}
	var queries []promqlnames.Query
	for _, sel := range selections {
		for _, q := range qs {
			queries = append(queries, promqlnames.Query{Expr: Expand(q.Expr, sel.namespace, sel.cluster), Instant: q.Instant})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	e, err := promqlnames.BuildEvaluator(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	series := append(scrape("shop", "main"), scrape("billing", "orders")...)
	outcomes, err := e.Evaluate(ctx, series, queries)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outcomes {
		q, sel := qs[i%len(qs)], selections[i/len(qs)]
		if o.Error != "" || o.Series == 0 || o.Samples == 0 {
			t.Errorf("%s / %s / %s with namespace %q, cluster %q: error %q, %d series, %d samples\n  %s",
				q.Row, q.Panel, q.RefID, sel.namespace, sel.cluster, o.Error, o.Series, o.Samples, o.Expr)
		}
	}
	t.Logf("%d queries evaluated over %d series", len(outcomes), len(series))
}
