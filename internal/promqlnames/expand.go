package promqlnames

import (
	"regexp"
	"slices"
)

// variableRef matches Grafana's three spellings of a template variable: ${name} (with an optional
// :format), $name and [[name]].
var variableRef = regexp.MustCompile(`\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)\]\]`)

// GrafanaBuiltins are values for Grafana's built-in interval variables that make a query valid
// PromQL (the values Grafana would substitute depend on the time range and the panel's width).
var GrafanaBuiltins = map[string]string{
	"__rate_interval": "5m",
	"__interval":      "1m",
	"__range":         "1h",
}

// Expand substitutes the template variables of a Grafana query with vars; a variable vars does
// not name is left as written, so that the parser rejects the query.
func Expand(expr string, vars map[string]string) string {
	return variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		if v, ok := vars[variableName(ref)]; ok {
			return v
		}
		return ref
	})
}

// Variables returns the names of the template variables a Grafana query refers to, sorted, each once.
func Variables(expr string) []string {
	var names []string
	for _, ref := range variableRef.FindAllString(expr, -1) {
		if n := variableName(ref); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

func variableName(ref string) string {
	m := variableRef.FindStringSubmatch(ref)
	for _, g := range m[1:] {
		if g != "" {
			return g
		}
	}
	return ""
}
