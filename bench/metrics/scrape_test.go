package main

import (
	"testing"
	"time"
)

const exposition = `# HELP cnm_schedule_lateness_seconds lateness
# TYPE cnm_schedule_lateness_seconds gauge
cnm_schedule_lateness_seconds{namespace="a",scheduledbackup="s1"} 0.5
cnm_schedule_lateness_seconds{namespace="a",scheduledbackup="s2"} 0
cnm_cluster_instances{cluster="db",namespace="a"} 1
controller_runtime_reconcile_total{controller="cluster",result="success"} 7
go_goroutines 42

`

// TestCountSeries has one row per rule of counting the series of a text exposition.
func TestCountSeries(t *testing.T) {
	for _, tc := range []struct {
		rule  string
		label string
		want  int
	}{
		{"without a label every sample line counts, comments and blank lines do not", "", 5},
		{"a label counts the samples carrying it, wherever it stands", "scheduledbackup", 2},
		{"a label first in the braces counts", "cluster", 1},
		{"a label no sample carries counts none", "pod", 0},
		{"a label is matched whole, not as the end of another", "space", 0},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := countSeries([]byte(exposition), tc.label); got != tc.want {
				t.Errorf("countSeries(%q) = %d, want %d", tc.label, got, tc.want)
			}
		})
	}
}

// TestCountMetric has one row per rule of counting one metric's samples.
func TestCountMetric(t *testing.T) {
	for _, tc := range []struct {
		rule, name string
		want       int
	}{
		{"samples with labels count", "cnm_schedule_lateness_seconds", 2},
		{"a sample without labels counts", "go_goroutines", 1},
		{"a metric whose name is a prefix of another's is not counted for it", "cnm_schedule_lateness", 0},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := countMetric([]byte(exposition), tc.name); got != tc.want {
				t.Errorf("countMetric(%q) = %d, want %d", tc.name, got, tc.want)
			}
		})
	}
}

// TestPercentile has one row per rule of the nearest-rank quantile.
func TestPercentile(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		var out []time.Duration
		for _, v := range vs {
			out = append(out, time.Duration(v)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100 .. 1, unsorted
	}
	for _, tc := range []struct {
		rule string
		ds   []time.Duration
		q    float64
		want time.Duration
	}{
		{"no observation is 0", nil, 0.5, 0},
		{"the median of 100 is the 50th smallest", ms(hundred...), 0.50, 50 * time.Millisecond},
		{"the 95th percentile of 100 is the 95th smallest", ms(hundred...), 0.95, 95 * time.Millisecond},
		{"q = 1 is the maximum", ms(3, 9, 1), 1, 9 * time.Millisecond},
		{"the median of an odd count is the middle one", ms(3, 9, 1), 0.5, 3 * time.Millisecond},
		{"one observation is every quantile", ms(4), 0.95, 4 * time.Millisecond},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := percentile(tc.ds, tc.q); got != tc.want {
				t.Errorf("percentile(q=%v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

// TestSeriesByFamily: samples count under the first word of their name, comments do not.
func TestSeriesByFamily(t *testing.T) {
	got := seriesByFamily([]byte(exposition + "up 1\n"))
	want := map[string]int{"cnm": 3, "controller": 1, "go": 1, "up": 1}
	if len(got) != len(want) {
		t.Fatalf("seriesByFamily = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("seriesByFamily[%q] = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
}
