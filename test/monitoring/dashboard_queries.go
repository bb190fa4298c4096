package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"

	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/promqlnames"
)

// DashboardPath is the generated Grafana dashboard of the repository (hack/dashboardgen writes it).
func DashboardPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "config", "monitoring", "grafana-dashboard.json")
}

// LoadDashboard decodes a dashboard file into the Grafana Foundation SDK's type, its panels'
// queries decoded as Prometheus queries.
func LoadDashboard(path string) (dashboard.Dashboard, error) {
	plugins.RegisterDefaultPlugins()
	var d dashboard.Dashboard
	data, err := os.ReadFile(path)
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return d, fmt.Errorf("decoding %s: %w", path, err)
	}
	return d, nil
}

// Query is one PromQL query of a dashboard panel.
type Query struct {
	Row     string // title of the row the panel is in
	Panel   string // title of the panel
	RefID   string
	Expr    string // as written, with Grafana's template variables
	Instant bool   // evaluated at one time (a stat) rather than over the time range
}

// Queries lists the queries of every panel, in the order of the dashboard. A query that is not a
// Prometheus query is an error.
func Queries(d dashboard.Dashboard) ([]Query, error) {
	var out []Query
	row := ""
	add := func(p dashboard.Panel) error {
		for _, t := range p.Targets {
			pq, ok := t.(*prometheus.Dataquery)
			if !ok {
				return fmt.Errorf("panel %q: a query of type %T, not Prometheus", deref(p.Title), t)
			}
			out = append(out, Query{Row: row, Panel: deref(p.Title), RefID: deref(pq.RefId), Expr: pq.Expr,
				Instant: pq.Instant != nil && *pq.Instant})
		}
		return nil
	}
	for _, pr := range d.Panels {
		if r := pr.RowPanel; r != nil {
			row = deref(r.Title)
			for _, p := range r.Panels {
				if err := add(p); err != nil {
					return nil, err
				}
			}
		}
		if pr.Panel != nil {
			if err := add(*pr.Panel); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// labelValues is Grafana's label_values(selector, label) variable query.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)

// VariableQuery is a template variable listing the values of Label among the series of Selector.
type VariableQuery struct {
	Name, Selector, Label string
}

// VariableQueries lists the dashboard's query variables. A query variable whose query is not
// label_values(selector, label) is an error.
func VariableQueries(d dashboard.Dashboard) ([]VariableQuery, error) {
	var out []VariableQuery
	for _, v := range d.Templating.List {
		if v.Type != dashboard.VariableTypeQuery {
			continue
		}
		if v.Query == nil || v.Query.String == nil {
			return nil, fmt.Errorf("variable %q: no query string", v.Name)
		}
		m := labelValues.FindStringSubmatch(*v.Query.String)
		if m == nil {
			return nil, fmt.Errorf("variable %q: %q is not label_values(selector, label)", v.Name, *v.Query.String)
		}
		out = append(out, VariableQuery{Name: v.Name, Selector: m[1], Label: m[2]})
	}
	return out, nil
}

// Expand makes a dashboard query PromQL: Grafana's interval variables get fixed values and the
// namespace and cluster variables the given regular expressions (".*" selects every one).
func Expand(expr, namespace, cluster string) string {
	vars := map[string]string{"namespace": namespace, "cluster": cluster}
	for k, v := range promqlnames.GrafanaBuiltins {
		vars[k] = v
	}
	return promqlnames.Expand(expr, vars)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
