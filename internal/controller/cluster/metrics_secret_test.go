package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// TestDecideMetricsSecret: the Cluster gets a metrics Secret (a token and the CA's certificate,
// never its key) once its CA exists; its ca.crt follows the bundle, its token is kept; a Secret
// of that name the user made is theirs.
func TestDecideMetricsSecret(t *testing.T) {
	name := specs.MetricsSecretName("db")
	one := func(mutate func(map[string]*corev1.Secret)) *world {
		w := newWorld(1).instance(1, true).primary("db-1", "db-1")
		w.o.Secrets = secretsOf(t, w.o.Cluster, []string{"db-1"}, testNow)
		if mutate != nil {
			mutate(w.o.Secrets)
		}
		return w
	}
	caCert := func(w *world) []byte { return w.o.Secrets[specs.CASecretName("db")].Data[specs.CACertKey] }
	owned := func(w *world, data map[string][]byte) *corev1.Secret {
		s := specs.BuildMetricsSecret(w.o.Cluster, "kept-token", nil)
		s.Data = data
		return s
	}
	for _, tc := range []struct {
		rule       string
		world      *world
		wantCreate bool
		wantUpdate bool
	}{
		{"a Cluster without one gets a metrics Secret", one(nil), true, false},
		{"made with the CA when the CA is still to be made (the act's bundle)",
			one(func(s map[string]*corev1.Secret) { delete(s, specs.CASecretName("db")) }), true, false},
		{"a metrics Secret with another ca.crt gets the bundle, its token kept", func() *world {
			w := one(nil)
			w.o.Secrets[name] = owned(w, map[string][]byte{specs.MetricsTokenKey: []byte("kept-token"), specs.MetricsCAKey: []byte("old")})
			return w
		}(), false, true},
		{"a metrics Secret holding the bundle is left alone", func() *world {
			w := one(nil)
			w.o.Secrets[name] = owned(w, map[string][]byte{specs.MetricsTokenKey: []byte("kept-token"), specs.MetricsCAKey: caCert(w)})
			return w
		}(), false, false},
		{"a metrics Secret the user made is never written", func() *world {
			w := one(nil)
			w.o.Secrets[name] = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.o.Cluster.Namespace},
				Data: map[string][]byte{specs.MetricsTokenKey: []byte("theirs")}}
			return w
		}(), false, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			m := tc.world.decide().Secrets.Metrics
			create, update := m != nil && m.Live == nil, m != nil && m.Live != nil
			if create != tc.wantCreate || update != tc.wantUpdate {
				t.Fatalf("metrics work %+v: create %v update %v, want %v %v", m, create, update, tc.wantCreate, tc.wantUpdate)
			}
			switch {
			case update && (string(m.Data[specs.MetricsCAKey]) != string(caCert(tc.world)) ||
				string(m.Data[specs.MetricsTokenKey]) != "kept-token" || m.Data[specs.CAKeyKey] != nil):
				t.Errorf("updated to %v, want the bundle and the kept token only", m.Data)
			}
		})
	}
	t.Run("the built Secret holds the token and the CA certificate, never the key", func(t *testing.T) {
		w := one(nil)
		s := specs.BuildMetricsSecret(w.o.Cluster, "tok", caCert(w))
		if string(s.Data[specs.MetricsTokenKey]) != "tok" || string(s.Data[specs.MetricsCAKey]) != string(caCert(w)) || len(s.Data) != 2 ||
			!metav1.IsControlledBy(s, w.o.Cluster) {
			t.Errorf("metrics Secret %+v", s)
		}
	})
}
