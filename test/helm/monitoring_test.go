package helm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Fixture monitoring files, as config/monitoring would hold them: hack/installgen copies them into
// the chart's files/monitoring.
const (
	fixturePodMonitor = `# A comment before the first document.
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: cloudnative-mysql-instances
  namespace: cloudnative-mysql-system
spec:
  namespaceSelector: {any: true}
  selector:
    matchExpressions:
    - {key: mysql.cloudnative-mysql.io/cluster, operator: Exists}
  podMetricsEndpoints:
  - port: metrics
    scheme: https
---
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: cloudnative-mysql-operator
spec:
  namespaceSelector: {matchNames: [cloudnative-mysql-system]}
  selector:
    matchLabels: {app.kubernetes.io/name: cloudnative-mysql}
  podMetricsEndpoints:
  - port: metrics
    honorLabels: true
`
	fixtureRule = `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: cloudnative-mysql
spec:
  groups:
  - name: cloudnative-mysql
    rules:
    - alert: CNMInstanceDown
      expr: cnm_instance_up == 0
`
	fixtureDashboard = `{"title": "cloudnative-mysql", "panels": []}`
)

// chartWithMonitoring copies the chart into a temporary directory with the fixture files in
// files/monitoring (in place of any the chart holds).
func chartWithMonitoring(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "cloudnative-mysql")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(root(t), chartPath))); err != nil {
		t.Fatal(err)
	}
	mon := filepath.Join(dst, "files", "monitoring")
	if err := os.RemoveAll(mon); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(mon, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"podmonitor.yaml": fixturePodMonitor, "rules.yaml": fixtureRule,
		"dashboard.json": fixtureDashboard} {
		if err := os.WriteFile(filepath.Join(mon, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestMonitoringOnShipsTheMonitoringFiles: with monitoring.enabled, every object of the chart's
// monitoring files is rendered in the release's namespace (the default namespace's name replaced
// inside it too), with Helm's labels and monitoring.labels, and the dashboards in one ConfigMap
// labelled for Grafana's sidecar; with monitoring off, none of them.
func TestMonitoringOnShipsTheMonitoringFiles(t *testing.T) {
	chart := chartWithMonitoring(t)
	objs := template(t, chart, "dbops", "--set", "monitoring.enabled=true", "--set", "monitoring.labels.release=prom")
	for _, name := range []string{"cloudnative-mysql-instances", "cloudnative-mysql-operator"} {
		pm := find(t, objs, "PodMonitor", name)
		if pm.GetNamespace() != "dbops" || pm.GetLabels()["release"] != "prom" || pm.GetLabels()["app.kubernetes.io/managed-by"] != "Helm" {
			t.Errorf("PodMonitor %s in %q labelled %v", name, pm.GetNamespace(), pm.GetLabels())
		}
	}
	op := find(t, objs, "PodMonitor", "cloudnative-mysql-operator")
	if got := op.Object["spec"].(map[string]any)["namespaceSelector"]; !strings.Contains(toString(got), "dbops") {
		t.Errorf("the operator's PodMonitor selects namespaces %v, want the release's", got)
	}
	rule := find(t, objs, "PrometheusRule", "cloudnative-mysql")
	if rule.GetNamespace() != "dbops" || !strings.Contains(toString(rule.Object["spec"]), "cnm_instance_up == 0") {
		t.Errorf("PrometheusRule %s/%s: %v", rule.GetNamespace(), rule.GetName(), rule.Object["spec"])
	}
	cm := find(t, objs, "ConfigMap", "cloudnative-mysql-grafana-dashboards")
	data := cm.Object["data"].(map[string]any)
	if data["dashboard.json"] != fixtureDashboard || cm.GetLabels()["grafana_dashboard"] != "1" || cm.GetNamespace() != "dbops" {
		t.Errorf("dashboards ConfigMap %s/%s labelled %v with %v", cm.GetNamespace(), cm.GetName(), cm.GetLabels(), data)
	}

	for _, o := range template(t, chart, "dbops") {
		if o.GetKind() == "PodMonitor" || o.GetKind() == "PrometheusRule" || o.GetKind() == "ConfigMap" {
			t.Errorf("monitoring off renders %s", key(o))
		}
	}
	if _, err := helm(t, "lint", "--strict", chart, "--set", "monitoring.enabled=true"); err != nil {
		t.Errorf("helm lint --strict with monitoring on: %v", err)
	}
}

// TestMonitoringOnWithoutMonitoringFiles: a chart whose files/monitoring is empty fails the render
// with monitoring.enabled rather than install no monitoring silently; the repository's chart
// renders each of its monitoring files when it has some.
func TestMonitoringOnWithoutMonitoringFiles(t *testing.T) {
	chart := chartWithMonitoring(t)
	if err := os.RemoveAll(filepath.Join(chart, "files", "monitoring")); err != nil {
		t.Fatal(err)
	}
	_, err := helm(t, "template", "cnm", chart, "--set", "monitoring.enabled=true")
	if err == nil || !strings.Contains(err.Error(), "holds no monitoring objects") {
		t.Errorf("monitoring on without monitoring files: %v", err)
	}

	files, _ := filepath.Glob(filepath.Join(root(t), chartPath, "files", "monitoring", "*"))
	if len(files) == 0 {
		if _, err := helm(t, "template", "cnm", chartPath, "--set", "monitoring.enabled=true"); err == nil {
			t.Error("the repository's chart has no monitoring files and renders monitoring.enabled without an error")
		}
		return
	}
	objs := template(t, chartPath, operatorNamespace, "--set", "monitoring.enabled=true")
	shipped := 0
	for _, o := range objs {
		if o.GroupVersionKind().Group == "monitoring.coreos.com" || o.GetKind() == "ConfigMap" {
			shipped++
		}
	}
	if shipped == 0 {
		t.Errorf("the chart holds %v and renders no monitoring object", files)
	}
}

func toString(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}

// TestMonitoringFollowsTheOperatorMetrics: with the operator's metrics endpoint off, the chart
// ships no operator PodMonitor nor scraper account (they would scrape nothing) and keeps the
// rules; with it served as plain HTTP, the HTTPS PodMonitor could not scrape it: the render fails
// and says why.
func TestMonitoringFollowsTheOperatorMetrics(t *testing.T) {
	objs := template(t, chartPath, operatorNamespace, "--set", "monitoring.enabled=true", "--set", "operator.metricsBindAddress=0")
	rules := 0
	for _, o := range objs {
		switch {
		case o.GetKind() == "PodMonitor" && o.GetName() == "cloudnative-mysql-operator",
			o.GetKind() == "ServiceAccount" && o.GetName() == "cloudnative-mysql-metrics-scraper":
			t.Errorf("metrics off renders %s", key(o))
		case o.GetKind() == "PrometheusRule":
			rules++
		}
	}
	if rules != 1 {
		t.Errorf("metrics off renders %d PrometheusRules, want the rules all the same", rules)
	}
	_, err := helm(t, "template", "cnm", chartPath, "--set", "monitoring.enabled=true", "--set", "operator.metricsInsecure=true")
	if err == nil || !strings.Contains(err.Error(), "metricsInsecure") {
		t.Errorf("monitoring on with plain-HTTP operator metrics: %v, want the render refused", err)
	}
}
