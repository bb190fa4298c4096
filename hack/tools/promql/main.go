// Command promql parses PromQL expressions with the Prometheus parser and prints, for each one,
// the parse error or the series selectors it reads (metric name and label matchers). It lives in
// its own module because the Prometheus module requires newer Kubernetes libraries than the
// operator is built with; internal/promqlnames builds and runs it.
//
// Input on stdin: a JSON array of expressions. Output on stdout: a JSON array of results, in order:
//
//	[{"expr": "...", "error": "...", "selectors": [{"metric": "up", "matchers": [{"name": "job", "type": "=", "value": "x"}]}]}]
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

type matcher struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

type selector struct {
	Metric   string    `json:"metric"`
	Matchers []matcher `json:"matchers"`
}

type result struct {
	Expr      string     `json:"expr"`
	Error     string     `json:"error,omitempty"`
	Selectors []selector `json:"selectors,omitempty"`
}

func main() {
	var exprs []string
	if err := json.NewDecoder(os.Stdin).Decode(&exprs); err != nil {
		fmt.Fprintln(os.Stderr, "promql: reading the expressions:", err)
		os.Exit(2)
	}
	p := parser.NewParser(parser.Options{})
	out := make([]result, 0, len(exprs))
	for _, e := range exprs {
		out = append(out, analyze(p, e))
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "promql: writing the results:", err)
		os.Exit(2)
	}
}

func analyze(p parser.Parser, e string) result {
	r := result{Expr: e}
	node, err := p.ParseExpr(e)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		s := selector{Metric: vs.Name}
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				s.Metric = m.Value
			}
			s.Matchers = append(s.Matchers, matcher{Name: m.Name, Type: m.Type.String(), Value: m.Value})
		}
		r.Selectors = append(r.Selectors, s)
		return nil
	})
	return r
}
