package admission_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestClusterMonitoringAdmission: spec.monitoring.podMonitor admits Prometheus durations and label
// maps a PodMonitor can carry, and refuses what Prometheus or the API server would refuse later.
func TestClusterMonitoringAdmission(t *testing.T) {
	podMonitor := func(fields string) string {
		return validCluster + "  monitoring:\n    podMonitor:\n" + fields
	}
	runAdmissionCases(t, []admissionCase{
		{name: "podMonitor enabled alone is accepted", manifest: podMonitor("      enabled: true\n")},
		{name: "interval 30s is accepted", manifest: podMonitor("      enabled: true\n      interval: 30s\n")},
		{name: "interval 1m30s is accepted", manifest: podMonitor("      interval: 1m30s\n")},
		{name: "interval 500ms is accepted", manifest: podMonitor("      interval: 500ms\n")},
		{name: "interval without a unit is rejected", manifest: podMonitor("      interval: \"30\"\n"),
			wantErr: "podMonitor.interval must be a Prometheus duration"},
		{name: "interval in Go's format with a fraction is rejected", manifest: podMonitor("      interval: 1.5m\n"),
			wantErr: "podMonitor.interval must be a Prometheus duration"},
		{name: "interval with units out of order is rejected", manifest: podMonitor("      interval: 30s1m\n"),
			wantErr: "podMonitor.interval must be a Prometheus duration"},
		{name: "an empty interval is rejected", manifest: podMonitor("      interval: \"\"\n"),
			wantErr: "podMonitor.interval must be a Prometheus duration"},
		{name: "a zero interval is rejected", manifest: podMonitor("      interval: 0s\n"),
			wantErr: "podMonitor.interval must be greater than zero"},
		{name: "a 33-character interval is rejected", manifest: podMonitor("      interval: " + strings.Repeat("1", 32) + "s\n"),
			wantErr: "spec.monitoring.podMonitor.interval: Too long"},
		{name: "labels for a podMonitorSelector are accepted",
			manifest: podMonitor("      labels: {release: prometheus, example.com/team: db-team, empty: \"\"}\n")},
		{name: "a label key with a space is rejected", manifest: podMonitor("      labels: {\"my team\": db}\n"),
			wantErr: "podMonitor.labels keys must be label keys"},
		{name: "a label key with an upper-case prefix is rejected", manifest: podMonitor("      labels: {Example.com/team: db}\n"),
			wantErr: "podMonitor.labels keys must be label keys"},
		{name: "a 64-character label name is rejected", manifest: podMonitor("      labels: {" + strings.Repeat("k", 64) + ": db}\n"),
			wantErr: "podMonitor.labels keys must be label keys"},
		{name: "a label key of the operator is rejected",
			manifest: podMonitor("      labels: {mysql.cloudnative-mysql.io/cluster: other}\n"),
			wantErr:  "podMonitor.labels must not use keys under mysql.cloudnative-mysql.io/"},
		{name: "a label value with a slash is rejected", manifest: podMonitor("      labels: {team: db/ops}\n"),
			wantErr: "spec.monitoring.podMonitor.labels.team: Invalid value"},
		{name: "a 64-character label value is rejected", manifest: podMonitor("      labels: {team: " + strings.Repeat("v", 64) + "}\n"),
			wantErr: "spec.monitoring.podMonitor.labels.team: Too long"},
		{name: "17 labels are rejected", manifest: podMonitor("      labels: {" + seventeenLabels() + "}\n"),
			wantErr: "spec.monitoring.podMonitor.labels: Too many"},
		{name: "podMonitor may be turned off later", manifest: podMonitor("      enabled: true\n"),
			update: func(u *unstructured.Unstructured) {
				if err := unstructured.SetNestedField(u.Object, false, "spec", "monitoring", "podMonitor", "enabled"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "an invalid interval is rejected on update too", manifest: podMonitor("      enabled: true\n"),
			update:        func(u *unstructured.Unstructured) { setField(u, "1x", "spec", "monitoring", "podMonitor", "interval") },
			wantUpdateErr: "podMonitor.interval must be a Prometheus duration"},
	})
}

func seventeenLabels() string {
	var kv []string
	for i := range 17 {
		kv = append(kv, "l"+strings.Repeat("x", i)+": v")
	}
	return strings.Join(kv, ", ")
}

// TestClusterMonitoringDefaults: a podMonitor declared without enabled is off.
func TestClusterMonitoringDefaults(t *testing.T) {
	var c v1.Cluster
	create(t, validCluster+"  monitoring:\n    podMonitor: {interval: 1m}\n", &c)
	pm := c.Spec.Monitoring.PodMonitor
	if pm.Enabled || pm.Interval != "1m" || c.PodMonitorEnabled() {
		t.Errorf("podMonitor %+v: want enabled false by default, interval 1m", *pm)
	}
}
