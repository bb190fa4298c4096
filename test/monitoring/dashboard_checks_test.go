package monitoring

import (
	"fmt"
	"slices"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/promqlnames"
)

// The dashboard's own variables; a query may also use Grafana's interval variables.
var dashboardVariables = []string{"datasource", "namespace", "cluster"}

// queryProblems are what is wrong with one parsed query (its expression expanded by
// Grafana's interval variables only, so that "$namespace" and "$cluster" stay in the matchers):
// it does not parse, it reads a series outside the contract or a series without naming it, or a
// selector of a series carrying namespace or cluster does not limit it to the selected ones
// (=~, since the variables are multi-valued).
func queryProblems(r promqlnames.Result, series map[string][]string) []string {
	if r.Error != "" {
		return []string{"does not parse: " + r.Error}
	}
	var out []string
	if len(r.Selectors) == 0 {
		out = append(out, "reads no series")
	}
	for _, s := range r.Selectors {
		labels, ok := series[s.Metric]
		switch {
		case s.Metric == "":
			out = append(out, "a selector without a metric name")
			continue
		case !ok:
			out = append(out, fmt.Sprintf("%s is not in the metric contract", s.Metric))
			continue
		}
		for _, label := range []string{"namespace", "cluster"} {
			if !slices.Contains(labels, label) {
				continue
			}
			m, ok := s.Matcher(label)
			if !ok || m.Type != "=~" || m.Value != "$"+label {
				out = append(out, fmt.Sprintf(`%s: want %s=~"$%s", have %+v`, s.Metric, label, label, m))
			}
		}
	}
	return out
}

// variableProblems are the variables an expression refers to that are neither the dashboard's
// nor Grafana's interval variables.
func variableProblems(expr string, defined []string) []string {
	var out []string
	for _, v := range promqlnames.Variables(expr) {
		if _, builtin := promqlnames.GrafanaBuiltins[v]; !builtin && !slices.Contains(defined, v) {
			out = append(out, "undefined variable $"+v)
		}
	}
	return out
}
