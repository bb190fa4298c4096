package cluster

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// MetricsSecretWork writes the Cluster's metrics Secret (specs.MetricsSecretName), which
// scrapers of the instances' /metrics read: created with a new token and the trust bundle of the
// act (the CA made in the same act included) when Live is nil, else the CA certificates written
// into Live (Data), the token kept.
type MetricsSecretWork struct {
	Live *corev1.Secret
	Data map[string][]byte
}

// planMetricsSecret decides the metrics Secret from the live one and the trust bundle: created
// with the CA's certificate, its ca.crt following the bundle through CA rolls. A Secret of that
// name the Cluster does not control is the user's (their own token) and left alone.
func planMetricsSecret(c *v1.Cluster, live map[string]*corev1.Secret, bundle []byte) *MetricsSecretWork {
	s := live[specs.MetricsSecretName(c.Name)]
	switch {
	case s == nil:
		return &MetricsSecretWork{}
	case !metav1.IsControlledBy(s, c) || len(bundle) == 0:
		return nil
	}
	if data := specs.MetricsTrustData(s.Data, bundle); data != nil {
		return &MetricsSecretWork{Live: s, Data: data}
	}
	return nil
}

// writeMetricsSecret performs w, bundle being the act's trust bundle; created says a new Secret
// was made (one that appeared meanwhile is left alone).
func (r *Reconciler) writeMetricsSecret(ctx context.Context, c *v1.Cluster, w *MetricsSecretWork, bundle []byte) (created bool, err error) {
	if w.Live != nil {
		next := w.Live.DeepCopy()
		next.Data = w.Data
		return false, r.writeSecret(ctx, next, w.Live)
	}
	token, err := specs.GeneratePassword(rand.Reader)
	if err != nil {
		return false, fmt.Errorf("generating the metrics token: %w", err)
	}
	return r.createSecretOnce(ctx, specs.BuildMetricsSecret(c, token, bundle))
}
