package monitoring

import (
	"slices"
	"testing"
)

// TestQueryChecks shows that each check of the dashboard's queries rejects what it is for.
func TestQueryChecks(t *testing.T) {
	cases := []struct {
		name, expr string
		problems   int
	}{
		{"a well-formed query has no problem",
			`sum by (namespace, cluster) (rate(cnm_mysql_queries_total{namespace=~"$namespace", cluster=~"$cluster"}[$__rate_interval]))`, 0},
		{"a query that does not parse is reported",
			`rate(cnm_mysql_queries_total{namespace=~"$namespace", cluster=~"$cluster"})`, 1},
		{"a metric outside the contract is reported",
			`cnm_no_such_series{namespace=~"$namespace", cluster=~"$cluster"}`, 1},
		{"a selector without a metric name is reported",
			`{__name__=~"cnm_.*", namespace=~"$namespace", cluster=~"$cluster"}`, 1},
		{"a query reading no series is reported", `vector(1)`, 1},
		{"a cluster series without $cluster is reported",
			`cnm_instance_up{namespace=~"$namespace"}`, 1},
		{"a cluster series without either variable is reported twice",
			`cnm_backups_healthy`, 2},
		{"an exact match on a multi-valued variable is reported",
			`cnm_instance_up{namespace="$namespace", cluster=~"$cluster"}`, 1},
		{"a matcher on another value is reported",
			`cnm_instance_up{namespace=~"$namespace", cluster=~"main"}`, 1},
		{"every selector of a binary operation is checked",
			`cnm_instance_up{namespace=~"$namespace", cluster=~"$cluster"} and on (namespace, pod) cnm_instance_primary`, 2},
		{"a series without a cluster label needs only $namespace",
			`cnm_schedule_lateness_seconds{namespace=~"$namespace"}`, 0},
		{"a histogram's bucket series is in the contract",
			`histogram_quantile(0.9, sum by (le) (rate(cnm_failover_duration_seconds_bucket{namespace=~"$namespace", cluster=~"$cluster"}[1h])))`, 0},
		{"a histogram's own name is not a series",
			`cnm_failover_duration_seconds{namespace=~"$namespace", cluster=~"$cluster"}`, 1},
	}
	exprs := make([]string, len(cases))
	for i, c := range cases {
		exprs[i] = builtinsOnly(c.expr)
	}
	results := parse(t, exprs)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := queryProblems(results[i], contract); len(got) != c.problems {
				t.Errorf("%s: %d problems %q, want %d", c.expr, len(got), got, c.problems)
			}
		})
	}
}

func TestVariableChecks(t *testing.T) {
	for _, c := range []struct {
		name, expr string
		want       []string
	}{
		{"the dashboard's and Grafana's interval variables are defined",
			`rate(x{namespace=~"$namespace", cluster=~"${cluster}"}[$__rate_interval]) + y[$__range]`, nil},
		{"an unknown variable is reported", `x{pod=~"$pod"}`, []string{"undefined variable $pod"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := variableProblems(c.expr, dashboardVariables); !slices.Equal(got, c.want) {
				t.Errorf("variableProblems = %q, want %q", got, c.want)
			}
		})
	}
}
