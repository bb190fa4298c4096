package admission_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// The operator's informers decode every stored Cluster, Backup and ScheduledBackup into the Go
// types of api/v1alpha1; one value the schema admits and the decoder refuses makes every list of
// that kind fail, and the operator stops reconciling in every namespace. The rules below are
// checked on every node of every generated schema (all versions, spec and status, through
// properties, items and additionalProperties), so that a new field cannot bring the gap back.

// quantityPattern is the pattern controller-gen gives every resource.Quantity. It admits strings
// such as 1e1.5 that resource.ParseQuantity refuses, hence the isQuantity rules.
const quantityPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`

// largestInt64Bound is the largest float64 below 2^63. A schema's bounds are float64: a maximum
// written as 9223372036854775807 becomes 2^63, which the API server's range check refuses as an
// int64 bound, after which it rejects every value of the field.
const largestInt64Bound = 9223372036854774784

// mapValueKey marks, in the node a rule sees, a map's value schema: a map's values are checked
// by the rule on the map.
const mapValueKey = "(map value)"

// schemaRule is one check on one schema node; it returns what is wrong, or "".
type schemaRule struct {
	name  string
	check func(node map[string]any) string
}

var schemaRules = []schemaRule{
	{name: "an integer has a maximum", check: func(n map[string]any) string {
		if n["type"] == "integer" && n["maximum"] == nil {
			return "type integer without maximum: a number beyond its Go type does not decode"
		}
		return ""
	}},
	{name: "an integer's bounds fit its format", check: func(n map[string]any) string {
		if n["type"] != "integer" {
			return ""
		}
		lo, hi := float64(math.MinInt64), float64(largestInt64Bound)
		if n["format"] == "int32" {
			lo, hi = math.MinInt32, math.MaxInt32
		}
		for _, k := range []string{"minimum", "maximum"} {
			if v, ok := n[k].(float64); ok && (v < lo || v > hi) {
				return fmt.Sprintf("%s %v is outside [%v, %v] for format %v", k, v, lo, hi, n["format"])
			}
		}
		return ""
	}},
	{name: "a date-time has a pattern", check: func(n map[string]any) string {
		if n["format"] == "date-time" && n["pattern"] == nil {
			return "format date-time without pattern: the API server admits a lower-case t or z (and a MicroTime without its six fractional digits), which the Go types refuse"
		}
		return ""
	}},
	{name: "a date-time's pattern is the one of a metav1 time type", check: func(n map[string]any) string {
		if p, ok := n["pattern"]; ok && n["format"] == "date-time" && p != v1.TimePattern && p != v1.MicroTimePattern {
			return fmt.Sprintf("pattern %v is neither v1alpha1.TimePattern nor v1alpha1.MicroTimePattern", p)
		}
		return ""
	}},
	{name: "a quantity map checks every value with isQuantity under maxProperties", check: func(n map[string]any) string {
		values, ok := n["additionalProperties"].(map[string]any)
		if !ok || !isQuantity(values) {
			return ""
		}
		if !hasRuleCalling(n, "isQuantity(") {
			return "a map of quantities without an isQuantity rule over its values: the quantity pattern admits 1e1.5, which does not decode"
		}
		if n["maxProperties"] == nil {
			return "a map of quantities without maxProperties: a rule over every value does not fit the CEL cost budget"
		}
		return ""
	}},
	{name: "a quantity field checks its value with isQuantity", check: func(n map[string]any) string {
		if isQuantity(n) && n[mapValueKey] != true && !hasRuleCalling(n, "isQuantity(") {
			return "a quantity without an isQuantity rule: the quantity pattern admits 1e1.5, which does not decode"
		}
		return ""
	}},
}

// isQuantity reports whether the node is a resource.Quantity as controller-gen writes it.
func isQuantity(n map[string]any) bool {
	return n["x-kubernetes-int-or-string"] == true && n["pattern"] == quantityPattern
}

// hasRuleCalling reports whether one of the node's CEL rules contains call.
func hasRuleCalling(n map[string]any, call string) bool {
	rules, _ := n["x-kubernetes-validations"].([]any)
	for _, r := range rules {
		if m, ok := r.(map[string]any); ok && strings.Contains(fmt.Sprint(m["rule"]), call) {
			return true
		}
	}
	return false
}

// schemaProblems walks schema and returns "<path>: <rule>: <problem>" for every node a rule
// refuses.
func schemaProblems(path string, schema map[string]any) []string {
	var problems []string
	var walk func(path string, n map[string]any)
	walk = func(path string, n map[string]any) {
		for _, r := range schemaRules {
			if msg := r.check(n); msg != "" {
				problems = append(problems, path+": "+r.name+": "+msg)
			}
		}
		props, _ := n["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if child, ok := props[name].(map[string]any); ok {
				walk(path+"."+name, child)
			}
		}
		if items, ok := n["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
		if values, ok := n["additionalProperties"].(map[string]any); ok {
			marked := map[string]any{mapValueKey: true}
			for k, v := range values {
				marked[k] = v
			}
			walk(path+"[*]", marked)
		}
	}
	walk(path, schema)
	return problems
}

// generatedCRDSchemas returns every version's schema of every CRD under config/crd/bases, keyed
// by "<plural> <version>".
func generatedCRDSchemas(t *testing.T) map[string]map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(kubetest.CRDDir(), "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under %s: %v", kubetest.CRDDir(), err)
	}
	schemas := map[string]map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Spec struct {
				Names    struct{ Plural string }
				Versions []struct {
					Name   string
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					}
				}
			}
		}
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			schemas[crd.Spec.Names.Plural+" "+v.Name] = v.Schema.OpenAPIV3Schema
		}
	}
	return schemas
}

func TestGeneratedCRDsAdmitOnlyWhatTheOperatorDecodes(t *testing.T) {
	schemas := generatedCRDSchemas(t)
	for _, kind := range []string{"clusters v1alpha1", "backups v1alpha1", "scheduledbackups v1alpha1"} {
		if schemas[kind] == nil {
			t.Errorf("no schema for %s", kind)
		}
	}
	keys := make([]string, 0, len(schemas))
	for k := range schemas {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var problems []string
	for _, k := range keys {
		problems = append(problems, schemaProblems(k, schemas[k])...)
	}
	if len(problems) > 0 {
		t.Errorf("%d schema nodes admit values the Go types do not decode:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

// TestSchemaRules shows each rule refusing the node it is about and accepting the node it asks for.
func TestSchemaRules(t *testing.T) {
	quantity := func(extra map[string]any) map[string]any {
		n := map[string]any{"x-kubernetes-int-or-string": true, "pattern": quantityPattern}
		for k, v := range extra {
			n[k] = v
		}
		return n
	}
	isQuantityRule := []any{map[string]any{"rule": "self.all(k, isQuantity(string(self[k])))"}}
	cases := []struct {
		rule      string
		refused   map[string]any
		satisfied map[string]any
	}{
		{"an integer has a maximum",
			map[string]any{"type": "integer", "format": "int64", "minimum": 0.0},
			map[string]any{"type": "integer", "format": "int64", "maximum": 9007199254740991.0}},
		{"an integer's bounds fit its format",
			map[string]any{"type": "integer", "format": "int32", "maximum": 4294967295.0},
			map[string]any{"type": "integer", "format": "int32", "maximum": 2147483647.0}},
		{"a date-time has a pattern",
			map[string]any{"type": "string", "format": "date-time"},
			map[string]any{"type": "string", "format": "date-time", "pattern": "^...$"}},
		{"a date-time's pattern is the one of a metav1 time type",
			map[string]any{"type": "string", "format": "date-time", "pattern": "^[0-9T:.-]+Z$"},
			map[string]any{"type": "string", "format": "date-time", "pattern": v1.MicroTimePattern}},
		{"a quantity map checks every value with isQuantity under maxProperties",
			map[string]any{"type": "object", "additionalProperties": quantity(nil), "x-kubernetes-validations": isQuantityRule},
			map[string]any{"type": "object", "additionalProperties": quantity(nil), "x-kubernetes-validations": isQuantityRule, "maxProperties": 16.0}},
		{"a quantity field checks its value with isQuantity",
			quantity(nil),
			quantity(map[string]any{"x-kubernetes-validations": []any{map[string]any{"rule": "type(self) == int || isQuantity(self)"}}})},
	}
	if len(cases) != len(schemaRules) {
		t.Fatalf("%d cases for %d rules", len(cases), len(schemaRules))
	}
	for i, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			r := schemaRules[i]
			if r.name != c.rule {
				t.Fatalf("case %d is for %q, rule %d is %q", i, c.rule, i, r.name)
			}
			if r.check(c.refused) == "" {
				t.Errorf("accepts %v", c.refused)
			}
			if msg := r.check(c.satisfied); msg != "" {
				t.Errorf("refuses %v: %s", c.satisfied, msg)
			}
		})
	}
	t.Run("an int64 maximum of 2^63-1 is out of range", func(t *testing.T) {
		n := map[string]any{"type": "integer", "format": "int64", "maximum": float64(math.MaxInt64)}
		if schemaRules[1].check(n) == "" {
			t.Error("accepted")
		}
	})
	t.Run("a map's quantity values are left to the map's rule", func(t *testing.T) {
		problems := schemaProblems("m", map[string]any{"type": "object", "additionalProperties": quantity(nil),
			"x-kubernetes-validations": isQuantityRule, "maxProperties": 16.0})
		if len(problems) > 0 {
			t.Errorf("problems: %v", problems)
		}
	})
}
