package instance

import (
	"maps"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// TestPlanParameterChange: one row per rule of what a change of spec.mysql.parameters sets and
// resets at runtime.
func TestPlanParameterChange(t *testing.T) {
	for _, tc := range []struct {
		rule             string
		running, desired map[string]string
		set, reset       map[string]string
	}{
		{"nothing changed: nothing to do", map[string]string{"max_connections": "500"}, map[string]string{"max_connections": "500"},
			map[string]string{}, map[string]string{}},
		{"a new value is set", map[string]string{"max_connections": "500"}, map[string]string{"max_connections": "600"},
			map[string]string{"max_connections": "600"}, map[string]string{}},
		{"a new key is set", map[string]string{}, map[string]string{"long_query_time": "2"},
			map[string]string{"long_query_time": "2"}, map[string]string{}},
		{"a removed key goes back to the server's default", map[string]string{"max_connections": "500"}, map[string]string{},
			map[string]string{}, map[string]string{"max_connections": mysql.DefaultValue}},
		{"a removed key with an operator default goes back to it", map[string]string{"replica_net_timeout": "30"}, map[string]string{},
			map[string]string{}, map[string]string{"replica_net_timeout": "5"}},
	} {
		ch := planParameterChange(tc.running, tc.desired)
		if !maps.Equal(ch.Set, tc.set) || !maps.Equal(ch.Reset, tc.reset) {
			t.Errorf("%s: set %v reset %v, want %v %v", tc.rule, ch.Set, ch.Reset, tc.set, tc.reset)
		}
	}
}

func TestParametersHashIgnoresSpelling(t *testing.T) {
	a := specs.ParametersHash(map[string]string{"max-connections": "5", "Long_Query_Time": "1"})
	b := specs.ParametersHash(map[string]string{"max_connections": "5", "long_query_time": "1"})
	c := specs.ParametersHash(map[string]string{"max_connections": "6", "long_query_time": "1"})
	if a != b || a == c {
		t.Errorf("hashes %s %s %s: spelling must not matter, values must", a, b, c)
	}
}

func TestSameSetting(t *testing.T) {
	for _, tc := range []struct {
		reported, asked string
		same            bool
	}{{"1", "ON", true}, {"0", "off", true}, {"1", "1", true}, {"0", "1", false}, {"utf8mb4", "UTF8MB4", true}} {
		if got := sameSetting(tc.reported, tc.asked); got != tc.same {
			t.Errorf("sameSetting(%q, %q) = %v", tc.reported, tc.asked, got)
		}
	}
}
