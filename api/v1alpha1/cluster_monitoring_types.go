package v1alpha1

// ConditionPodMonitorReady is True while the Cluster's PodMonitor is as spec.monitoring.podMonitor
// asks, False when the operator cannot keep it (the reason says why: the PodMonitor kind is not
// installed, a PodMonitor of that name belongs to someone else, or the API server refused the
// last write). The condition is absent while no PodMonitor is asked for.
const ConditionPodMonitorReady = "PodMonitorReady"

// MonitoringConfiguration configures the scraping of the Cluster's instances.
type MonitoringConfiguration struct {
	// PodMonitor makes the operator create and keep a PodMonitor (monitoring.coreos.com/v1) named
	// after the Cluster, which scrapes every instance's metrics port with the Cluster's metrics
	// Secret.
	// +optional
	PodMonitor *PodMonitorConfiguration `json:"podMonitor,omitempty"`
}

// PodMonitorConfiguration is the PodMonitor the operator keeps for the Cluster.
type PodMonitorConfiguration struct {
	// Enabled makes the operator create the PodMonitor and keep it as declared; turned off, the
	// operator deletes the PodMonitor it made. A PodMonitor of that name the Cluster does not
	// control is never touched.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled"`

	// Labels are added to the PodMonitor's labels, for a Prometheus' podMonitorSelector. Keys
	// under mysql.cloudnative-mysql.io/ are the operator's.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="podMonitor.labels keys must be label keys: an optional DNS-subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.'"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('mysql.cloudnative-mysql.io/'))",message="podMonitor.labels must not use keys under mysql.cloudnative-mysql.io/: those are the operator's"
	// +optional
	Labels map[string]PodMonitorLabelValue `json:"labels,omitempty"`

	// Interval is how often Prometheus scrapes each instance, as a Prometheus duration (30s, 1m,
	// 1m30s); 30s when empty.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$') && size(self) > 0",message="podMonitor.interval must be a Prometheus duration such as 30s, 1m or 1m30s (units y, w, d, h, m, s, ms in that order)"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(0+(y|w|d|h|m|s|ms))+$')",message="podMonitor.interval must be greater than zero"
	// +optional
	Interval string `json:"interval,omitempty"`
}

// PodMonitorLabelValue is the value of a label: at most 63 letters, digits, '-', '_' or '.',
// beginning and ending with a letter or digit, or empty.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
type PodMonitorLabelValue string

// DefaultPodMonitorInterval is the scrape interval of a PodMonitor that declares none.
const DefaultPodMonitorInterval = "30s"

// PodMonitorEnabled reports whether the Cluster asks for its PodMonitor.
func (c *Cluster) PodMonitorEnabled() bool {
	return c.Spec.Monitoring != nil && c.Spec.Monitoring.PodMonitor != nil && c.Spec.Monitoring.PodMonitor.Enabled
}
