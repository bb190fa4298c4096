package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// scrape reads the operator's Prometheus metrics as name{labels} -> value.
func scrape(ctx context.Context, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// metricDelta sums, over every series of name whose labels contain all of match, end - start.
func metricDelta(start, end map[string]float64, name string, match ...string) float64 {
	var sum float64
	for k, v := range end {
		if !strings.HasPrefix(k, name+"{") && k != name {
			continue
		}
		ok := true
		for _, m := range match {
			ok = ok && strings.Contains(k, m)
		}
		if ok {
			sum += v - start[k]
		}
	}
	return sum
}

// operatorRequests counts, from the operator's rest_client_requests_total, the API requests it
// sent in the window by HTTP method (Events included).
func operatorRequests(m0, m1 map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m1 {
		if strings.HasPrefix(k, "rest_client_requests_total{") {
			if d := v - m0[k]; d > 0 {
				out[label(k, "method")] += d
			}
		}
	}
	return out
}

// operatorFailures counts the operator's API answers in the window that were not a success, by
// method and HTTP code (client-go's "<error>" when no answer came), and its reconcile errors by
// controller.
func operatorFailures(m0, m1 map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m1 {
		d := v - m0[k]
		switch {
		case d <= 0:
		case strings.HasPrefix(k, "rest_client_requests_total{"):
			if code := label(k, "code"); !strings.HasPrefix(code, "2") {
				out[label(k, "method")+" "+code] += d
			}
		case strings.HasPrefix(k, "controller_runtime_reconcile_errors_total{"):
			out[label(k, "controller")+" reconcile errors"] += d
		}
	}
	return out
}

// label extracts a label's value from a series name.
func label(series, name string) string {
	i := strings.Index(series, name+`="`)
	if i < 0 {
		return ""
	}
	rest := series[i+len(name)+2:]
	return rest[:strings.IndexByte(rest, '"')]
}

// histogramQuantile is the upper bound of the bucket holding quantile q of the observations a
// histogram gained between two scrapes.
func histogramQuantile(m0, m1 map[string]float64, name string, q float64) time.Duration {
	type bucket struct{ le, count float64 }
	var buckets []bucket
	for k, v := range m1 {
		if !strings.HasPrefix(k, name+"_bucket{") {
			continue
		}
		le, err := strconv.ParseFloat(label(k, "le"), 64)
		if err == nil {
			buckets = append(buckets, bucket{le, v - m0[k]})
		}
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].le < buckets[j].le })
	if len(buckets) == 0 || buckets[len(buckets)-1].count == 0 {
		return 0
	}
	want := q * buckets[len(buckets)-1].count
	for _, b := range buckets {
		if b.count >= want {
			if math.IsInf(b.le, 1) {
				return -1
			}
			return time.Duration(b.le * float64(time.Second)).Round(time.Millisecond)
		}
	}
	return 0
}
