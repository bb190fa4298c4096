package cluster

import (
	"bytes"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

func TestPlanCertificates(t *testing.T) {
	c := newWorld(2).o.Cluster
	ca, err := certs.NewCA("db-ca", testNow)
	if err != nil {
		t.Fatal(err)
	}
	trust := Trust{Current: ca}
	issued := map[string]LiveCert{}
	for _, w := range planCertificates(c, []string{"db-1"}, trust, nil, testNow) {
		kp, err := certs.Issue(ca, w.Request, testNow)
		if err != nil {
			t.Fatal(err)
		}
		issued[w.Secret] = LiveCert{Cert: kp.CertPEM, Trust: ca.CertPEM}
	}
	secrets := func(work []CertWork) []string {
		return namesOf(work, func(w CertWork) string { return w.Secret + ":" + w.Reason })
	}
	for _, tc := range []struct {
		rule      string
		instances []string
		existing  map[string]LiveCert
		at        time.Time
		mutate    func(*v1.Cluster)
		want      []string
	}{
		{"everything is issued on creation", []string{"db-1"}, nil, testNow, nil,
			[]string{"db-1-server-tls:missing", "db-operator-client-tls:missing", "db-replication-client-tls:missing"}},
		{"nothing while certificates are fresh", []string{"db-1"}, issued, testNow, nil, []string{}},
		{"a new instance gets its server certificate", []string{"db-1", "db-2"}, issued, testNow, nil,
			[]string{"db-2-server-tls:missing"}},
		{"all are renewed near expiry", []string{"db-1"}, issued, testNow.Add(certs.LeafValidity - time.Hour), nil,
			[]string{"db-1-server-tls:expiring", "db-operator-client-tls:expiring", "db-replication-client-tls:expiring"}},
		{"a new additional Service reissues server certificates only", []string{"db-1"}, issued, testNow,
			func(c *v1.Cluster) {
				c.Spec.Managed = &v1.ManagedConfiguration{Services: &v1.ManagedServices{
					Additional: []v1.ManagedService{{Name: "lb", SelectorType: v1.ServiceSelectorTypeRW}}}}
			}, []string{"db-1-server-tls:names differ"}},
		{"disabling the -r Service keeps its name, the one scrapers verify: nothing reissued", []string{"db-1"}, issued, testNow,
			func(c *v1.Cluster) {
				c.Spec.Managed = &v1.ManagedConfiguration{Services: &v1.ManagedServices{
					DisabledDefaultServices: []v1.ServiceSelectorType{v1.ServiceSelectorTypeR}}}
			}, []string{}},
	} {
		cc := c.DeepCopy()
		if tc.mutate != nil {
			tc.mutate(cc)
		}
		got := secrets(planCertificates(cc, tc.instances, trust, tc.existing, tc.at))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.rule, got, tc.want)
		}
	}
}

// secretsOf builds the live Secrets of a Cluster whose CA was made at caAt and whose certificates
// for instances were issued under it at testNow, with every password Secret.
func secretsOf(t *testing.T, c *v1.Cluster, instances []string, caAt time.Time) map[string]*corev1.Secret {
	t.Helper()
	ca, err := certs.NewCA(c.Name+"-ca", caAt)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Secret{specs.CASecretName(c.Name): specs.BuildCASecret(c, ca.CertPEM, ca.KeyPEM)}
	for _, user := range specs.Users {
		out[specs.UserSecretName(c.Name, user)] = specs.BuildUserSecret(c, user, "pw")
	}
	for name, req := range certRequests(c, instances) {
		kp, err := certs.Issue(ca, req, testNow)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = specs.BuildTLSSecret(c, name, kp.SecretData(ca))
	}
	return out
}

func TestDecideSecrets(t *testing.T) {
	issued := func(w SecretWork) []string {
		return namesOf(w.Certificates, func(c CertWork) string { return c.Secret + ":" + c.Reason })
	}
	allUsers := func() []string { return append([]string(nil), specs.Users...) }
	one := func() *world { return newWorld(1).instance(1, true).primary("db-1", "db-1") }
	withSecrets := func(w *world, caAt time.Time, mutate func(map[string]*corev1.Secret)) *world {
		w.o.Secrets = secretsOf(t, w.o.Cluster, []string{"db-1"}, caAt)
		if mutate != nil {
			mutate(w.o.Secrets)
		}
		return w
	}
	for _, tc := range []struct {
		rule        string
		world       *world
		users       []string
		renewCA     string
		issued      []string
		updatesLive bool
	}{
		{"on creation every password Secret, the CA and every certificate are made", newWorld(1),
			allUsers(), certs.ReasonMissing,
			[]string{"db-1-server-tls:missing", "db-operator-client-tls:missing", "db-replication-client-tls:missing"}, false},
		{"nothing is written while every Secret is there and fresh", withSecrets(one(), testNow, nil),
			nil, "", nil, false},
		{"a missing password Secret is made; the others are never touched",
			withSecrets(one(), testNow, func(s map[string]*corev1.Secret) { delete(s, specs.UserSecretName("db", specs.Users[0])) }),
			specs.Users[:1], "", nil, false},
		{"an expiring CA is rolled: every certificate is kept, with both CAs trusted",
			withSecrets(one(), testNow.Add(-certs.CAValidity+30*24*time.Hour), nil),
			nil, certs.ReasonExpiring,
			[]string{"db-1-server-tls:trusted CAs differ", "db-operator-client-tls:trusted CAs differ",
				"db-replication-client-tls:trusted CAs differ"}, true},
		{"an unparsable CA is replaced",
			withSecrets(one(), testNow, func(s map[string]*corev1.Secret) { s["db-ca"].Data[specs.CAKeyKey] = []byte("garbage") }),
			nil, certs.ReasonUnparsable,
			[]string{"db-1-server-tls:not signed by the current CA", "db-operator-client-tls:not signed by the current CA",
				"db-replication-client-tls:not signed by the current CA"}, true},
		{"an instance a scale-up adds gets its certificate before its Pod is created",
			withSecrets(newWorld(2).instance(1, true).primary("db-1", "db-1"), testNow, nil),
			nil, "", []string{"db-2-server-tls:missing"}, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			d := tc.world.decide()
			w := d.Secrets
			if !slices.Equal(w.Users, tc.users) || w.RenewCA != tc.renewCA || !slices.Equal(issued(w), tc.issued) {
				t.Fatalf("users %v, renew CA %q, issued %v; want %v, %q, %v", w.Users, w.RenewCA, issued(w),
					tc.users, tc.renewCA, tc.issued)
			}
			if (w.RenewCA == "") != (w.CA != nil) {
				t.Errorf("the CA is kept exactly when it is not renewed: renew %q, CA %v", w.RenewCA, w.CA != nil)
			}
			for _, cw := range w.Certificates {
				if (cw.Live != nil) != tc.updatesLive {
					t.Errorf("%s: live Secret %v, want %v", cw.Secret, cw.Live != nil, tc.updatesLive)
				}
			}
			// gather reads every Secret this decision may write, so none that exists is created twice.
			read := secretNames(tc.world.o.Cluster, certInstances(tc.world.o.Cluster, tc.world.o.PVCs, tc.world.o.Pods))
			for _, cw := range w.Certificates {
				if !slices.Contains(read, cw.Secret) {
					t.Errorf("%s is written but gather does not read it: %v", cw.Secret, read)
				}
			}
		})
	}
}

// rollSecrets builds the live Secrets of a Cluster during a CA roll: the CA Secret holds current
// and previous (nil: no roll), the certificates are signed by signer at issuedAt and their ca.crt
// is the bundle of both CAs.
func rollSecrets(t *testing.T, c *v1.Cluster, instances []string, current, previous, signer *certs.KeyPair, issuedAt time.Time) map[string]*corev1.Secret {
	t.Helper()
	var prevPEM []byte
	if previous != nil {
		prevPEM = previous.CertPEM
	}
	out := map[string]*corev1.Secret{specs.CASecretName(c.Name): specs.BuildRollingCASecret(c, current.CertPEM, current.KeyPEM, prevPEM)}
	for _, user := range specs.Users {
		out[specs.UserSecretName(c.Name, user)] = specs.BuildUserSecret(c, user, "pw")
	}
	for name, req := range certRequests(c, instances) {
		kp, err := certs.Issue(signer, req, issuedAt)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = specs.BuildTLSSecret(c, name, map[string][]byte{certs.CertKey: kp.CertPEM, certs.KeyKey: kp.KeyPEM,
			certs.CAKey: certs.Bundle(current.CertPEM, prevPEM)})
	}
	return out
}

// TestCARoll: rolling the cluster CA never hands out a certificate its peers do not trust yet.
func TestCARoll(t *testing.T) {
	mustCA := func(at time.Time) *certs.KeyPair {
		ca, err := certs.NewCA("db-ca", at)
		if err != nil {
			t.Fatal(err)
		}
		return ca
	}
	oldCA := mustCA(testNow.Add(-certs.CAValidity + 30*24*time.Hour))
	youngCA := mustCA(testNow.Add(-time.Minute))
	settledCA := mustCA(testNow.Add(-certs.PropagationDelay - time.Minute))
	leaves := []string{"db-1-server-tls", "db-operator-client-tls", "db-replication-client-tls"}
	all := func(reason string) []string {
		var out []string
		for _, l := range leaves {
			out = append(out, l+":"+reason)
		}
		return out
	}
	in := func(live map[string]*corev1.Secret) *world {
		w := newWorld(1).instance(1, true).primary("db-1", "db-1")
		w.o.Secrets = live
		return w
	}
	c := newWorld(1).o.Cluster
	db1 := []string{"db-1"}
	for _, tc := range []struct {
		rule     string
		world    *world
		renewCA  string
		previous *certs.KeyPair
		endRoll  bool
		work     []string
		trust    bool // every work item rewrites ca.crt only
	}{
		{"an expiring CA is rolled: a new CA, the old one still trusted, the certificates kept with both CAs",
			in(rollSecrets(t, c, db1, oldCA, nil, oldCA, testNow.Add(-time.Hour))),
			certs.ReasonExpiring, oldCA, false, all(certs.ReasonTrustDiffers), true},
		{"while the new CA may not be trusted everywhere, certificates of the previous CA are kept",
			in(rollSecrets(t, c, db1, youngCA, oldCA, oldCA, testNow.Add(-time.Hour))),
			"", oldCA, false, nil, false},
		{"a certificate that must be issued during a young roll is issued by the new CA",
			in(func() map[string]*corev1.Secret {
				s := rollSecrets(t, c, db1, youngCA, oldCA, oldCA, testNow.Add(-time.Hour))
				delete(s, "db-1-server-tls")
				return s
			}()),
			"", oldCA, false, []string{"db-1-server-tls:missing"}, false},
		{"an expiring certificate of the previous CA is reissued at once, under the new CA",
			in(rollSecrets(t, c, db1, youngCA, oldCA, oldCA, testNow.Add(-certs.LeafValidity+time.Hour))),
			"", oldCA, false, all(certs.ReasonExpiring), false},
		{"once every Pod trusts the new CA, certificates of the previous CA are reissued under it",
			in(rollSecrets(t, c, db1, settledCA, oldCA, oldCA, testNow.Add(-time.Hour))),
			"", oldCA, false, all(certs.ReasonCARolled), false},
		{"the previous CA stays trusted while the new certificates may not be in use everywhere",
			in(rollSecrets(t, c, db1, settledCA, oldCA, settledCA, testNow.Add(-time.Minute))),
			"", oldCA, false, nil, false},
		{"the roll ends: the previous CA is dropped and every ca.crt holds the new CA alone",
			in(rollSecrets(t, c, db1, settledCA, oldCA, settledCA, testNow.Add(-certs.PropagationDelay-time.Second))),
			"", nil, true, all(certs.ReasonTrustDiffers), true},
		{"a certificate signed by neither CA is reissued at once, even during a young roll",
			in(rollSecrets(t, c, db1, youngCA, oldCA, mustCA(testNow), testNow.Add(-time.Hour))),
			"", oldCA, false, all(certs.ReasonOtherIssuer), false},
		{"an unparsable CA is replaced without trusting anything of the old one",
			in(func() map[string]*corev1.Secret {
				s := rollSecrets(t, c, db1, settledCA, nil, settledCA, testNow.Add(-time.Hour))
				s["db-ca"].Data[specs.CAKeyKey] = []byte("garbage")
				return s
			}()),
			certs.ReasonUnparsable, nil, false, all(certs.ReasonOtherIssuer), false},
		{"outside a roll, fresh certificates with the CA as ca.crt are left alone",
			in(rollSecrets(t, c, db1, settledCA, nil, settledCA, testNow.Add(-time.Hour))),
			"", nil, false, nil, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			w := tc.world.decide().Secrets
			got := namesOf(w.Certificates, func(c CertWork) string { return c.Secret + ":" + c.Reason })
			var wantPrev []byte
			if tc.previous != nil {
				wantPrev = tc.previous.CertPEM
			}
			if w.RenewCA != tc.renewCA || !bytes.Equal(w.PreviousCA, wantPrev) || w.EndRoll != tc.endRoll ||
				!slices.Equal(got, append([]string{}, tc.work...)) {
				t.Fatalf("renew CA %q, previous trusted %v, end roll %v, work %v; want %q, %v, %v, %v",
					w.RenewCA, w.PreviousCA != nil, w.EndRoll, got, tc.renewCA, tc.previous != nil, tc.endRoll, tc.work)
			}
			for _, cw := range w.Certificates {
				if cw.TrustOnly != tc.trust {
					t.Errorf("%s: trust only %v, want %v", cw.Secret, cw.TrustOnly, tc.trust)
				}
			}
		})
	}
}
