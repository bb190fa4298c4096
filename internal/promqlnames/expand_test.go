package promqlnames

import (
	"slices"
	"testing"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"namespace": "ns", "cluster": "c", "__rate_interval": "5m"}
	for _, tc := range []struct {
		name, expr, want string
	}{
		{"dollar name", `up{namespace=~"$namespace"}`, `up{namespace=~"ns"}`},
		{"braces", `up{cluster=~"${cluster}"}`, `up{cluster=~"c"}`},
		{"braces with a format", `up{cluster=~"${cluster:regex}"}`, `up{cluster=~"c"}`},
		{"double brackets", `up{cluster=~"[[cluster]]"}`, `up{cluster=~"c"}`},
		{"builtin interval", `rate(x[$__rate_interval])`, `rate(x[5m])`},
		{"unknown variable left as written", `up{pod="$pod"}`, `up{pod="$pod"}`},
		{"regular expression anchor untouched", `up{pod=~"a$"}`, `up{pod=~"a$"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Expand(tc.expr, vars); got != tc.want {
				t.Errorf("Expand(%q) = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
}

func TestVariables(t *testing.T) {
	got := Variables(`sum(rate(x{namespace=~"$namespace",cluster=~"${cluster}"}[$__rate_interval])) / y{cluster=~"$cluster"}`)
	want := []string{"__rate_interval", "cluster", "namespace"}
	if !slices.Equal(got, want) {
		t.Errorf("Variables = %v, want %v", got, want)
	}
}
