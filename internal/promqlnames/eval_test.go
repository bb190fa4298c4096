package promqlnames

import (
	"context"
	"testing"
	"time"
)

func TestEvaluate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	e, err := BuildEvaluator(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	series := []Series{
		{Labels: map[string]string{"__name__": "c_total", "pod": "a"}, Increase: 1},
		{Labels: map[string]string{"__name__": "g", "pod": "a"}, Value: 1},
		{Labels: map[string]string{"__name__": "g", "pod": "b"}, Value: 0},
		{Labels: map[string]string{"__name__": "last_timestamp_seconds", "pod": "a"}, Value: -600, SinceNow: true},
	}
	cases := []struct {
		name                  string
		q                     Query
		wantErr               bool
		wantSeries, atSamples int
	}{
		{"a counter's rate over the last hour has a point a minute", Query{Expr: `rate(c_total[5m])`}, false, 1, 61},
		{"a filter keeps the matching series", Query{Expr: `g == 1`, Instant: true}, false, 1, 1},
		{"a timestamp series gives its age", Query{Expr: `time() - last_timestamp_seconds < 601`, Instant: true}, false, 1, 1},
		{"a series nobody wrote returns nothing", Query{Expr: `absent_series_total`, Instant: true}, false, 0, 0},
		{"a one-to-one match without a common label set returns nothing", Query{Expr: `g{pod="a"} / g{pod="b"}`, Instant: true}, false, 0, 0},
		{"a many-to-many match is an error at evaluation", Query{Expr: `g / on () g`, Instant: true}, true, 0, 0},
		{"a query that does not parse is an error", Query{Expr: `rate(c_total)`, Instant: true}, true, 0, 0},
	}
	queries := make([]Query, len(cases))
	for i, c := range cases {
		queries[i] = c.q
	}
	outcomes, err := e.Evaluate(ctx, series, queries)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := outcomes[i]
			if (o.Error != "") != c.wantErr {
				t.Fatalf("error %q, want an error: %v", o.Error, c.wantErr)
			}
			if o.Series != c.wantSeries || o.Samples < c.atSamples {
				t.Errorf("%d series, %d samples; want %d series, at least %d samples", o.Series, o.Samples, c.wantSeries, c.atSamples)
			}
		})
	}
}
