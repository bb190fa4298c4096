// Command eval runs PromQL queries with the Prometheus query engine over series it writes into a
// temporary TSDB, and prints what each query returned. It answers whether queries return data
// from series shaped as the caller describes them (names, labels, values) without a scrape.
//
// Input on stdin, JSON:
//
//	{"series": [{"labels": {"__name__": "up", "pod": "a"}, "value": 1, "increase": 0}],
//	 "queries": [{"expr": "sum(up)", "instant": true}]}
//
// Each series gets one sample every 15 s over the two hours before now, the k-th worth
// value + k*increase (a timestamp series can give its value as an offset from now with
// "sinceNow": true). An instant query is evaluated at now, a range query over the last hour with
// a 1 m step. Output on stdout: a JSON array, in the order of the queries, of
// {"expr", "error", "series", "samples"}: the series and samples of the result, NaN samples not counted.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/tsdb"
)

type series struct {
	Labels   map[string]string `json:"labels"`
	Value    float64           `json:"value"`
	Increase float64           `json:"increase"`
	SinceNow bool              `json:"sinceNow"`
}

type query struct {
	Expr    string `json:"expr"`
	Instant bool   `json:"instant"`
}

type input struct {
	Series  []series `json:"series"`
	Queries []query  `json:"queries"`
}

type outcome struct {
	Expr    string `json:"expr"`
	Error   string `json:"error,omitempty"`
	Series  int    `json:"series"`
	Samples int    `json:"samples"`
}

const (
	step    = 15 * time.Second
	history = 2 * time.Hour
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(2)
	}
}

func run() error {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		return fmt.Errorf("reading the input: %w", err)
	}
	dir, err := os.MkdirTemp("", "promql-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := tsdb.Open(dir, nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		return fmt.Errorf("opening the TSDB: %w", err)
	}
	defer db.Close()
	now := time.Now().Truncate(time.Second)
	if err := load(db, in.Series, now); err != nil {
		return err
	}
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	out := make([]outcome, 0, len(in.Queries))
	for _, q := range in.Queries {
		out = append(out, evaluate(eng, db, q, now))
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

func load(db *tsdb.DB, ss []series, now time.Time) error {
	app := db.Appender(context.Background())
	n := int(history / step)
	for _, s := range ss {
		ls := labels.FromMap(s.Labels)
		for k := 0; k <= n; k++ {
			at := now.Add(-history + time.Duration(k)*step)
			v := s.Value + float64(k)*s.Increase
			if s.SinceNow {
				v += float64(at.Unix())
			}
			if _, err := app.Append(0, ls, at.UnixMilli(), v); err != nil {
				return fmt.Errorf("appending %s: %w", ls, err)
			}
		}
	}
	return app.Commit()
}

func evaluate(eng *promql.Engine, db *tsdb.DB, q query, now time.Time) outcome {
	o := outcome{Expr: q.Expr}
	ctx := context.Background()
	var pq promql.Query
	var err error
	if q.Instant {
		pq, err = eng.NewInstantQuery(ctx, db, nil, q.Expr, now)
	} else {
		pq, err = eng.NewRangeQuery(ctx, db, nil, q.Expr, now.Add(-time.Hour), now, time.Minute)
	}
	if err != nil {
		o.Error = err.Error()
		return o
	}
	defer pq.Close()
	r := pq.Exec(ctx)
	if r.Err != nil {
		o.Error = r.Err.Error()
		return o
	}
	switch v := r.Value.(type) {
	case promql.Vector:
		for _, s := range v {
			if !math.IsNaN(s.F) {
				o.Series++
				o.Samples++
			}
		}
	case promql.Matrix:
		for _, s := range v {
			counted := 0
			for _, p := range s.Floats {
				if !math.IsNaN(p.F) {
					counted++
				}
			}
			if counted > 0 {
				o.Series++
				o.Samples += counted
			}
		}
	case promql.Scalar:
		if !math.IsNaN(v.V) {
			o.Series, o.Samples = 1, 1
		}
	}
	return o
}
