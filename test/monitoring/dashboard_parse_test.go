package monitoring

import (
	"context"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/promqlnames"
)

// parse parses the expressions with the Prometheus parser, built for this test.
func parse(t *testing.T, exprs []string) []promqlnames.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, err := promqlnames.Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	results, err := p.Parse(ctx, exprs)
	if err != nil {
		t.Fatal(err)
	}
	return results
}

// builtinsOnly expands Grafana's interval variables and leaves the dashboard's own.
func builtinsOnly(expr string) string {
	return promqlnames.Expand(expr, promqlnames.GrafanaBuiltins)
}
