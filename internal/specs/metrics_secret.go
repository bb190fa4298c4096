package specs

import (
	corev1 "k8s.io/api/core/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// Keys of the metrics Secret (MetricsSecretName).
const (
	MetricsTokenKey = "token"
	MetricsCAKey    = "ca.crt"
)

// BuildMetricsSecret is the Cluster's metrics Secret: the scrapers' bearer token and the CA
// certificates that verify the instances' server certificates (never the CA's key).
func BuildMetricsSecret(c *mysqlv1alpha1.Cluster, token string, caBundle []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: objectMeta(c, MetricsSecretName(c.Name)),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{MetricsTokenKey: []byte(token), MetricsCAKey: caBundle},
	}
}

// MetricsTrustData is data with MetricsCAKey set to bundle, nil when it already is (or there is
// no bundle yet): the token is kept.
func MetricsTrustData(data map[string][]byte, bundle []byte) map[string][]byte {
	return withTrust(data, MetricsCAKey, bundle)
}
