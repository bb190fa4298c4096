package cluster

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// TestDecideAppTrust: the application Secret the Cluster created carries the CA's certificate
// (the trust bundle during a roll), so clients verify the server; never the CA's key, and never
// in a Secret the user created.
func TestDecideAppTrust(t *testing.T) {
	one := func(mutate func(map[string]*corev1.Secret)) *world {
		w := newWorld(1).instance(1, true).primary("db-1", "db-1")
		w.o.Secrets = secretsOf(t, w.o.Cluster, []string{"db-1"}, testNow)
		if mutate != nil {
			mutate(w.o.Secrets)
		}
		return w
	}
	caCert := func(w *world) []byte { return w.o.Secrets[specs.CASecretName("db")].Data[specs.CACertKey] }
	app := specs.UserSecretName("db", specs.UserApp)
	for _, tc := range []struct {
		rule  string
		world *world
		want  bool
	}{
		{"the Cluster's application Secret gets the CA's certificate", one(nil), true},
		{"an application Secret the user created is never written",
			one(func(s map[string]*corev1.Secret) { s[app].OwnerReferences = nil }), false},
		{"nothing while the CA is still to be made", one(func(s map[string]*corev1.Secret) { delete(s, specs.CASecretName("db")) }), false},
		{"an expiring CA replaced in this act: nothing yet, the next reconcile writes the new bundle",
			func() *world {
				w := newWorld(1).instance(1, true).primary("db-1", "db-1")
				w.o.Secrets = secretsOf(t, w.o.Cluster, []string{"db-1"}, testNow.Add(-certs.CAValidity+30*24*time.Hour))
				return w
			}(), false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			w := tc.world.decide().Secrets
			if (w.AppTrust != nil) != tc.want {
				t.Fatalf("AppTrust = %+v, want one: %v", w.AppTrust, tc.want)
			}
			if w.AppTrust == nil {
				return
			}
			if string(w.AppTrust.Data[specs.AppCAKey]) != string(caCert(tc.world)) || w.AppTrust.Data[specs.CAKeyKey] != nil ||
				w.AppTrust.Live.Name != app {
				t.Errorf("AppTrust writes %s with ca.crt %q (want the CA's certificate) and ca.key %v", w.AppTrust.Live.Name,
					w.AppTrust.Data[specs.AppCAKey], w.AppTrust.Data[specs.CAKeyKey] != nil)
			}
		})
	}
	t.Run("an application Secret that holds the bundle is left alone", func(t *testing.T) {
		w := one(nil)
		w.o.Secrets[app].Data[specs.AppCAKey] = caCert(w)
		if got := w.decide().Secrets.AppTrust; got != nil {
			t.Errorf("AppTrust = %+v, want none", got)
		}
	})
}
