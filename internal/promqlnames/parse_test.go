package promqlnames

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exprs := []string{
		`sum by (pod) (rate(cnm_a_total{namespace=~"ns"}[5m])) / on (pod) cnm_b`,
		`histogram_quantile(0.9, sum by (le) (rate(cnm_h_bucket[5m])))`,
		`{__name__="cnm_c", cluster="x"}`,
		`{__name__=~"cnm_.*"}`,
		`rate(cnm_a_total)`,
		`sum(cnm_b`,
	}
	results, err := p.Parse(ctx, exprs)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		i         int
		wantErr   bool
		wantNames []string
	}{
		{"binary operation reads both sides", 0, false, []string{"cnm_a_total", "cnm_b"}},
		{"histogram quantile reads the bucket series", 1, false, []string{"cnm_h_bucket"}},
		{"name given as a __name__ matcher", 2, false, []string{"cnm_c"}},
		{"regular expression on __name__ names nothing", 3, false, nil},
		{"rate of an instant vector is rejected", 4, true, nil},
		{"unclosed parenthesis is rejected", 5, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := results[tc.i]
			if r.Expr != exprs[tc.i] {
				t.Fatalf("result %d is of %q, want %q", tc.i, r.Expr, exprs[tc.i])
			}
			if (r.Error != "") != tc.wantErr {
				t.Fatalf("error %q, want an error: %v", r.Error, tc.wantErr)
			}
			if got := Names(r); !slices.Equal(got, tc.wantNames) {
				t.Errorf("Names = %v, want %v", got, tc.wantNames)
			}
		})
	}
	m, ok := results[0].Selectors[0].Matcher("namespace")
	if !ok || m.Type != "=~" || m.Value != "ns" {
		t.Errorf("namespace matcher of the first selector = %+v, %v; want =~ \"ns\"", m, ok)
	}
	if _, ok := results[0].Selectors[1].Matcher("namespace"); ok {
		t.Errorf("the second selector has no namespace matcher, found one")
	}
}
