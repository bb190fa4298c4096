package specs

import (
	"os"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func withPodMonitor(c *mysqlv1alpha1.Cluster, pm mysqlv1alpha1.PodMonitorConfiguration) *mysqlv1alpha1.Cluster {
	c.Spec.Monitoring = &mysqlv1alpha1.MonitoringConfiguration{PodMonitor: &pm}
	return c
}

// TestBuildPodMonitorIsTheSample: the operator's PodMonitor for cluster-sample is the hand-written
// config/monitoring/cluster-podmonitor.yaml, field for field, plus the cluster label and the owner.
func TestBuildPodMonitorIsTheSample(t *testing.T) {
	raw, err := os.ReadFile("../../config/monitoring/cluster-podmonitor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var sample monitoringv1.PodMonitor
	if err := yaml.UnmarshalStrict(raw, &sample); err != nil {
		t.Fatalf("decoding the sample strictly: %v", err)
	}
	c := testCluster()
	c.Name = "cluster-sample"
	got := BuildPodMonitor(withPodMonitor(c, mysqlv1alpha1.PodMonitorConfiguration{Enabled: true}))
	if !equality.Semantic.DeepEqual(got.Spec, sample.Spec) {
		gotYAML, _ := yaml.Marshal(got.Spec)
		wantYAML, _ := yaml.Marshal(sample.Spec)
		t.Errorf("spec differs from the sample:\n%s\nwant:\n%s", gotYAML, wantYAML)
	}
	for k, v := range sample.Labels {
		if got.Labels[k] != v {
			t.Errorf("label %s = %q, the sample has %q", k, got.Labels[k], v)
		}
	}
	if got.Name != sample.Name || got.Kind != sample.Kind || got.APIVersion != sample.APIVersion {
		t.Errorf("%s %s %s, the sample is %s %s %s", got.APIVersion, got.Kind, got.Name, sample.APIVersion, sample.Kind, sample.Name)
	}
}

// TestBuildPodMonitor: one row per rule of the operator's PodMonitor.
func TestBuildPodMonitor(t *testing.T) {
	endpoint := func(pm *monitoringv1.PodMonitor) monitoringv1.PodMetricsEndpoint {
		return pm.Spec.PodMetricsEndpoints[0]
	}
	for _, tc := range []struct {
		rule string
		pm   mysqlv1alpha1.PodMonitorConfiguration
		ok   func(pm *monitoringv1.PodMonitor) bool
	}{
		{"named after the Cluster, in its namespace, controlled by it", mysqlv1alpha1.PodMonitorConfiguration{Enabled: true},
			func(pm *monitoringv1.PodMonitor) bool {
				return pm.Name == "db" && pm.Namespace == "ns" && ownedByCluster(pm.ObjectMeta)
			}},
		{"selects the Cluster's Pods by the cluster label", mysqlv1alpha1.PodMonitorConfiguration{Enabled: true},
			func(pm *monitoringv1.PodMonitor) bool {
				return equality.Semantic.DeepEqual(pm.Spec.Selector, metav1.LabelSelector{MatchLabels: map[string]string{mysqlv1alpha1.ClusterLabel: "db"}})
			}},
		{"carries the cluster label", mysqlv1alpha1.PodMonitorConfiguration{Enabled: true},
			func(pm *monitoringv1.PodMonitor) bool { return pm.Labels[mysqlv1alpha1.ClusterLabel] == "db" }},
		{"scrapes the metrics port over HTTPS at /metrics", mysqlv1alpha1.PodMonitorConfiguration{Enabled: true},
			func(pm *monitoringv1.PodMonitor) bool {
				e := endpoint(pm)
				return len(pm.Spec.PodMetricsEndpoints) == 1 && *e.Port == "metrics" && e.Scheme.String() == "https" && e.Path == "/metrics"
			}},
		{"the bearer token is key token of <cluster>-metrics", mysqlv1alpha1.PodMonitorConfiguration{Enabled: true},
			func(pm *monitoringv1.PodMonitor) bool {
				a := endpoint(pm).Authorization
				return a.Type == "Bearer" && a.Credentials.Name == "db-metrics" && a.Credentials.Key == "token"
			}},
		{"the CA is key ca.crt of <cluster>-metrics and the server name <cluster>-r", mysqlv1alpha1.PodMonitorConfiguration{Enabled: true},
			func(pm *monitoringv1.PodMonitor) bool {
				tls := endpoint(pm).TLSConfig
				return tls.CA.Secret.Name == "db-metrics" && tls.CA.Secret.Key == "ca.crt" && tls.CA.ConfigMap == nil &&
					*tls.ServerName == "db-r" && tls.KeySecret == nil && tls.InsecureSkipVerify == nil
			}},
		{"targets get namespace, pod and cluster", mysqlv1alpha1.PodMonitorConfiguration{Enabled: true},
			func(pm *monitoringv1.PodMonitor) bool {
				got := map[string]monitoringv1.LabelName{}
				for _, r := range endpoint(pm).RelabelConfigs {
					if len(r.SourceLabels) != 1 || r.Action != "replace" {
						return false
					}
					got[r.TargetLabel] = r.SourceLabels[0]
				}
				return len(got) == 3 && got["namespace"] == "__meta_kubernetes_namespace" && got["pod"] == "__meta_kubernetes_pod_name" &&
					got["cluster"] == "__meta_kubernetes_pod_label_mysql_cloudnative_mysql_io_cluster"
			}},
		{"interval 30s when none is declared", mysqlv1alpha1.PodMonitorConfiguration{Enabled: true},
			func(pm *monitoringv1.PodMonitor) bool { return endpoint(pm).Interval == "30s" }},
		{"the declared interval", mysqlv1alpha1.PodMonitorConfiguration{Enabled: true, Interval: "1m30s"},
			func(pm *monitoringv1.PodMonitor) bool { return endpoint(pm).Interval == "1m30s" }},
		{"the declared labels are added", mysqlv1alpha1.PodMonitorConfiguration{Enabled: true,
			Labels: map[string]mysqlv1alpha1.PodMonitorLabelValue{"release": "prometheus"}},
			func(pm *monitoringv1.PodMonitor) bool {
				return pm.Labels["release"] == "prometheus" && pm.Labels[mysqlv1alpha1.ClusterLabel] == "db" &&
					pm.Labels["app.kubernetes.io/component"] == "monitoring"
			}},
		{"the operator's labels win over declared ones", mysqlv1alpha1.PodMonitorConfiguration{Enabled: true,
			Labels: map[string]mysqlv1alpha1.PodMonitorLabelValue{"app.kubernetes.io/name": "mine"}},
			func(pm *monitoringv1.PodMonitor) bool {
				return pm.Labels["app.kubernetes.io/name"] == "cloudnative-mysql"
			}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			pm := BuildPodMonitor(withPodMonitor(testCluster(), tc.pm))
			if !tc.ok(pm) {
				out, _ := yaml.Marshal(pm)
				t.Errorf("PodMonitor:\n%s", out)
			}
		})
	}
}
