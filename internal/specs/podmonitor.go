package specs

import (
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// PodMonitorName is the name of the PodMonitor the operator keeps for a Cluster: the Cluster's.
func PodMonitorName(cluster string) string { return cluster }

// podMonitorLabels are the labels of every PodMonitor the operator builds beside the cluster
// label and the user's, as config/monitoring/cluster-podmonitor.yaml carries them.
var podMonitorLabels = map[string]string{
	"app.kubernetes.io/name":      "cloudnative-mysql",
	"app.kubernetes.io/component": "monitoring",
}

// BuildPodMonitor is the PodMonitor that scrapes every instance of c, as
// config/monitoring/cluster-podmonitor.yaml does by hand: the metrics port over HTTPS, the bearer
// token and the CA from the Cluster's metrics Secret, the server name every instance certificate
// carries (the r Service's), and the namespace, pod and cluster labels the alert rules aggregate
// by. The user's spec.monitoring.podMonitor labels are added; the operator's win on a shared key.
func BuildPodMonitor(c *mysqlv1alpha1.Cluster) *monitoringv1.PodMonitor {
	interval := mysqlv1alpha1.DefaultPodMonitorInterval
	user := map[string]string{}
	if c.Spec.Monitoring != nil && c.Spec.Monitoring.PodMonitor != nil {
		pm := c.Spec.Monitoring.PodMonitor
		if pm.Interval != "" {
			interval = pm.Interval
		}
		for k, v := range pm.Labels {
			user[k] = string(v)
		}
	}
	meta := objectMeta(c, PodMonitorName(c.Name))
	meta.Labels = mergeLabels(user, mergeLabels(podMonitorLabels, meta.Labels))
	secret := func(key string) *corev1.SecretKeySelector {
		return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: MetricsSecretName(c.Name)}, Key: key}
	}
	port, scheme, serverName := MetricsPortName, monitoringv1.Scheme("https"), RoleServiceName(c.Name, mysqlv1alpha1.ServiceSelectorTypeR)
	endpoint := monitoringv1.PodMetricsEndpoint{
		Port:     &port,
		Path:     "/metrics",
		Scheme:   &scheme,
		Interval: monitoringv1.Duration(interval),
		// action replace is Prometheus' default, written out as the CRD's schema defaults it, so
		// that the object read back equals the one built.
		RelabelConfigs: []monitoringv1.RelabelConfig{
			{SourceLabels: []monitoringv1.LabelName{"__meta_kubernetes_namespace"}, TargetLabel: "namespace", Action: "replace"},
			{SourceLabels: []monitoringv1.LabelName{"__meta_kubernetes_pod_name"}, TargetLabel: "pod", Action: "replace"},
			{SourceLabels: []monitoringv1.LabelName{"__meta_kubernetes_pod_label_mysql_cloudnative_mysql_io_cluster"}, TargetLabel: "cluster", Action: "replace"},
		},
	}
	endpoint.Authorization = &monitoringv1.SafeAuthorization{Type: "Bearer", Credentials: secret(MetricsTokenKey)}
	endpoint.TLSConfig = &monitoringv1.SafeTLSConfig{CA: monitoringv1.SecretOrConfigMap{Secret: secret(MetricsCAKey)}, ServerName: &serverName}
	return &monitoringv1.PodMonitor{
		TypeMeta:   metav1.TypeMeta{APIVersion: monitoringv1.SchemeGroupVersion.String(), Kind: monitoringv1.PodMonitorsKind},
		ObjectMeta: meta,
		Spec: monitoringv1.PodMonitorSpec{
			Selector:            metav1.LabelSelector{MatchLabels: ClusterLabels(c.Name)},
			PodMetricsEndpoints: []monitoringv1.PodMetricsEndpoint{endpoint},
		},
	}
}
