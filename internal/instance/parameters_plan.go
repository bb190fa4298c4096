package instance

import (
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// initOnlyKeys are parameters mysqld reads only when it initializes a data directory: a
// different value on an existing one makes mysqld refuse to start. A change is refused, never
// applied or written to my.cnf.
var initOnlyKeys = specs.InitOnlyParameters

// canonicalParameters is specs.CanonicalParameters.
func CanonicalParameters(params map[string]string) map[string]string {
	return specs.CanonicalParameters(params)
}

// ParametersHash is specs.ParametersHash.
func ParametersHash(params map[string]string) string { return specs.ParametersHash(params) }

// parameterChange is what one convergence does at runtime: Set the keys whose value changed or
// that are new, Reset the ones no longer asked for (to their overridable default, or the server's).
type parameterChange struct {
	Set   map[string]string
	Reset map[string]string
}

// planParameterChange compares what mysqld runs with (running: the user parameters it started
// with or was set to, canonical keys) with what the Cluster asks for (desired, canonical, refused
// keys already left out).
func planParameterChange(running, desired map[string]string) parameterChange {
	ch := parameterChange{Set: map[string]string{}, Reset: map[string]string{}}
	for k, v := range desired {
		if cur, ok := running[k]; !ok || cur != v {
			ch.Set[k] = v
		}
	}
	for k := range running {
		if _, ok := desired[k]; !ok {
			ch.Reset[k] = defaultOf(k)
		}
	}
	return ch
}

// defaultOf is the value a parameter takes when the user no longer sets it: the operator's
// overridable default, or the server's own.
func defaultOf(key string) string {
	for _, kv := range overridableDefaults {
		if kv[0] == key {
			return kv[1]
		}
	}
	return mysql.DefaultValue
}

// sameSetting reports whether the value a server reports (SELECT @@GLOBAL) is the one a
// parameter asks for: case aside, and ON/OFF against 1/0.
func sameSetting(reported, asked string) bool {
	norm := func(s string) string {
		switch s = strings.ToUpper(strings.TrimSpace(s)); s {
		case "ON", "TRUE":
			return "1"
		case "OFF", "FALSE":
			return "0"
		}
		return s
	}
	return norm(reported) == norm(asked)
}
