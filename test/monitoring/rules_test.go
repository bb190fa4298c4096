package monitoring

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"
)

// runbookBase is where every alert's runbook_url points, followed by #<alert in lower case>.
const runbookBase = "https://github.com/cloudnative-mysql/cloudnative-mysql/blob/main/docs/monitoring.md"

// severities are the values of the severity label an alert may have.
var severities = map[string]bool{"critical": true, "warning": true}

// readRules decodes rules.yaml strictly as a PrometheusRule's spec: the rule file format and the
// spec are the same, so an unknown field is a mistake in either.
func readRules(t *testing.T) monitoringv1.PrometheusRuleSpec {
	t.Helper()
	src, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	var spec monitoringv1.PrometheusRuleSpec
	if err := yaml.UnmarshalStrict(src, &spec); err != nil {
		t.Fatalf("%s: %v", rulesPath, err)
	}
	return spec
}

func alerts(spec monitoringv1.PrometheusRuleSpec) []monitoringv1.Rule {
	var out []monitoringv1.Rule
	for _, g := range spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

// githubAnchor is the anchor GitHub gives a Markdown heading.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var heading = regexp.MustCompile(`(?m)^#{1,6} +(.+)$`)

// docSections maps the anchor of each heading of docs/monitoring.md to the text up to the next
// heading.
func docSections(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	idx := heading.FindAllStringSubmatchIndex(string(doc), -1)
	for i, m := range idx {
		end := len(doc)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		sections[githubAnchor(strings.Trim(string(doc[m[2]:m[3]]), "` "))] = string(doc[m[1]:end])
	}
	return sections
}

func TestEveryAlertHasSeverityAnnotationsAndARunbook(t *testing.T) {
	all := alerts(readRules(t))
	if len(all) < 17 {
		t.Fatalf("only %d alerts in %s", len(all), rulesPath)
	}
	sections := docSections(t)
	seen := map[string]bool{}
	for _, a := range all {
		if seen[a.Alert] {
			t.Errorf("alert %s is defined twice", a.Alert)
		}
		seen[a.Alert] = true
		if !severities[a.Labels["severity"]] {
			t.Errorf("%s: severity %q, want one of critical, warning", a.Alert, a.Labels["severity"])
		}
		for _, k := range []string{"summary", "description"} {
			if strings.TrimSpace(a.Annotations[k]) == "" {
				t.Errorf("%s: no %s annotation", a.Alert, k)
			}
		}
		anchor := strings.ToLower(a.Alert)
		if want := runbookBase + "#" + anchor; a.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", a.Alert, a.Annotations["runbook_url"], want)
		}
		runbook, ok := sections[anchor]
		if !ok {
			t.Errorf("%s: docs/monitoring.md has no heading with anchor #%s", a.Alert, anchor)
			continue
		}
		for _, part := range []string{"**Meaning.**", "**Impact.**", "kubectl", "ix.**"} {
			if !strings.Contains(runbook, part) {
				t.Errorf("%s: its runbook lacks %q (meaning, impact, what to check with kubectl, how to fix)", a.Alert, part)
			}
		}
	}
}

// ruleTests is the part of a promtool test file this package reads.
type ruleTests struct {
	Tests []struct {
		AlertRuleTests []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestEveryAlertHasAFiringAndAQuietTestCase: promtool itself accepts a test of an alert that does
// not exist when it expects nothing, and tests no alert nobody wrote a case for.
func TestEveryAlertHasAFiringAndAQuietTestCase(t *testing.T) {
	files, err := filepath.Glob(ruleTestsGlob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule test files match %s (%v)", ruleTestsGlob, err)
	}
	firing, quiet := map[string]int{}, map[string]int{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rt ruleTests
		if err := yaml.Unmarshal(src, &rt); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range rt.Tests {
			for _, a := range tc.AlertRuleTests {
				if len(a.ExpAlerts) > 0 {
					firing[a.Alertname]++
				} else {
					quiet[a.Alertname]++
				}
			}
		}
	}
	defined := map[string]bool{}
	for _, a := range alerts(readRules(t)) {
		defined[a.Alert] = true
		if firing[a.Alert] == 0 {
			t.Errorf("%s: no test case where it fires", a.Alert)
		}
		if quiet[a.Alert] == 0 {
			t.Errorf("%s: no test case where it stays quiet", a.Alert)
		}
	}
	for name := range mergeKeys(firing, quiet) {
		if !defined[name] {
			t.Errorf("the rule tests name an alert %s that rules.yaml does not define", name)
		}
	}
}

func mergeKeys(ms ...map[string]int) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			out[k] = true
		}
	}
	return out
}

var metricName = regexp.MustCompile(`\b(?:cnm_|controller_runtime_)[a-z0-9_]+\b`)

// TestRulesReadDocumentedMetricsOnly: every metric an expression reads is listed in
// docs/monitoring.md, whose metric list is the contract the instance manager and the operator
// export. A renamed or misspelt metric would leave an alert that never fires.
func TestRulesReadDocumentedMetricsOnly(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range metricName.FindAllString(string(doc), -1) {
		documented[m] = true
	}
	used := map[string]bool{}
	for _, g := range readRules(t).Groups {
		for _, r := range g.Rules {
			for _, m := range metricName.FindAllString(r.Expr.String(), -1) {
				used[m] = true
			}
		}
	}
	if len(used) < 20 {
		t.Fatalf("found only %d metric names in the rules: %v", len(used), used)
	}
	var missing []string
	for m := range used {
		if !documented[m] {
			missing = append(missing, m)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the rules read metrics docs/monitoring.md does not list: %v", missing)
	}
}

// TestPrometheusRuleCarriesTheRules: the generated PrometheusRule holds exactly rules.yaml's groups
// (`make manifests` regenerates it; `make verify-generated` fails when it is stale).
func TestPrometheusRuleCarriesTheRules(t *testing.T) {
	var pr monitoringv1.PrometheusRule
	decodeStrictFile(t, filepath.Join(monitoringDir, "prometheusrule.yaml"), &pr)
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" || pr.Name == "" {
		t.Fatalf("prometheusrule.yaml is %s %s %q", pr.APIVersion, pr.Kind, pr.Name)
	}
	if want := readRules(t); !reflect.DeepEqual(pr.Spec, want) {
		t.Fatal("prometheusrule.yaml's spec differs from rules.yaml: run `make manifests`")
	}
}
