package clustercontroller

import (
	"context"
	"crypto/x509"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

func secretData(t *testing.T, ns, name string) map[string][]byte {
	t.Helper()
	var s corev1.Secret
	if err := kc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	return s.Data
}

func leaf(t *testing.T, ns, name string) *x509.Certificate {
	t.Helper()
	cert, err := certs.ParseCertificate(secretData(t, ns, name)[certs.CertKey])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cert
}

// TestCertificatesAndRenewal checks the SANs and usages of every certificate against the cluster
// CA, then moves the clock close to expiry and into a new Service and watches them be reissued,
// while user passwords never change.
func TestCertificatesAndRenewal(t *testing.T) {
	c := readyCluster(t, 2, func(c *v1.Cluster) {
		c.Spec.Managed = &v1.ManagedConfiguration{Services: &v1.ManagedServices{
			Additional: []v1.ManagedService{{Name: "lb", SelectorType: v1.ServiceSelectorTypeRW}}}}
	})
	ns := c.Namespace
	roots := x509.NewCertPool()
	ca, err := certs.ParseCertificate(secretData(t, ns, "db-ca")["ca.crt"])
	if err != nil {
		t.Fatal(err)
	}
	roots.AddCert(ca)
	verify := func(cert *x509.Certificate, usage x509.ExtKeyUsage, name string) error {
		_, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, CurrentTime: clk.Now(), KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	server := leaf(t, ns, "db-2-server-tls")
	for _, name := range []string{"db-2.db-2." + ns + ".svc", "db-2", "db-2." + ns, "db-2." + ns + ".svc",
		"db-2." + ns + ".svc.cluster.local", "db-rw." + ns + ".svc", "db-ro", "db-r." + ns, "db-lb." + ns + ".svc"} {
		if err := verify(server, x509.ExtKeyUsageServerAuth, name); err != nil {
			t.Errorf("the server certificate of db-2 is valid for %s: %v", name, err)
		}
	}
	for secret, cn := range map[string]string{"db-operator-client-tls": certs.OperatorCommonName, "db-replication-client-tls": "replication"} {
		cert := leaf(t, ns, secret)
		if err := verify(cert, x509.ExtKeyUsageClientAuth, ""); err != nil || cert.Subject.CommonName != cn {
			t.Errorf("%s is a client certificate for %s: %v, CN %s", secret, cn, err, cert.Subject.CommonName)
		}
	}
	if string(secretData(t, ns, "db-2-server-tls")["ca.crt"]) != string(secretData(t, ns, "db-ca")["ca.crt"]) {
		t.Error("server certificate Secrets carry the CA for Pods to trust")
	}
	app := secretData(t, ns, "db-app")
	for k, want := range map[string]string{"username": "app", "dbname": "app", "host": "db-rw." + ns + ".svc", "port": "3306"} {
		if string(app[k]) != want {
			t.Errorf("the app Secret's %s is %q, want %q", k, app[k], want)
		}
	}
	if !strings.HasPrefix(string(app["uri"]), "mysql://app:"+string(app["password"])+"@db-rw."+ns+".svc:3306/app?ssl-mode=VERIFY_IDENTITY") ||
		!strings.HasPrefix(string(app["jdbc-uri"]), "jdbc:mysql://db-rw."+ns+".svc:3306/app?") ||
		!strings.Contains(string(app["jdbc-uri"]), "sslMode=VERIFY_IDENTITY") {
		t.Errorf("the app Secret's URIs name the account, the -rw Service and the database, and verify the server: %q, %q", app["uri"], app["jdbc-uri"])
	}
	// Clients verify the server with the app Secret alone: it carries the CA's certificate, never
	// its key, and the -rw name verifies on every instance's certificate.
	check.Eventually(t, waitTimeout, "the app Secret carries the CA's certificate", func(context.Context) (bool, error) {
		return string(secretData(t, ns, "db-app")["ca.crt"]) == string(secretData(t, ns, "db-ca")["ca.crt"]), nil
	})
	if secretData(t, ns, "db-app")["ca.key"] != nil {
		t.Error("the app Secret carries the CA's key")
	}
	appRoots := x509.NewCertPool()
	appRoots.AppendCertsFromPEM(secretData(t, ns, "db-app")["ca.crt"])
	if _, err := leaf(t, ns, "db-2-server-tls").Verify(x509.VerifyOptions{Roots: appRoots, DNSName: "db-rw." + ns + ".svc",
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, CurrentTime: clk.Now()}); err != nil {
		t.Errorf("an instance's certificate does not verify as db-rw.%s.svc with the app Secret's ca.crt: %v", ns, err)
	}
	passwords := map[string]string{}
	for _, u := range []string{"root", "replication", "backup", "app"} {
		passwords[u] = string(secretData(t, ns, "db-"+u)["password"])
	}

	t.Run("certificates are renewed within the threshold of expiry; the CA and passwords stay", func(t *testing.T) {
		before := leaf(t, ns, "db-1-server-tls").SerialNumber
		clk.SetTime(clk.Now().Add(certs.LeafValidity - certs.RenewBefore + time.Hour))
		check.Eventually(t, waitTimeout, "db-1's certificate is reissued", func(context.Context) (bool, error) {
			return leaf(t, ns, "db-1-server-tls").SerialNumber.Cmp(before) != 0, nil
		})
		for _, s := range []string{"db-2-server-tls", "db-operator-client-tls", "db-replication-client-tls"} {
			check.Eventually(t, waitTimeout, s+" is renewed", func(context.Context) (bool, error) {
				return leaf(t, ns, s).NotAfter.After(clk.Now().Add(certs.RenewBefore)), nil
			})
		}
		if after, _ := certs.ParseCertificate(secretData(t, ns, "db-ca")["ca.crt"]); !after.Equal(ca) {
			t.Error("the CA is not renewed with its leaves")
		}
		for u, p := range passwords {
			if got := string(secretData(t, ns, "db-"+u)["password"]); got != p || len(p) != 32 {
				t.Errorf("the %s password is never overwritten", u)
			}
		}
		assertEvents(t, ns, "CertificateIssued")
	})
	t.Run("a new additional Service is added to every server certificate", func(t *testing.T) {
		updateCluster(t, c, false, func(c *v1.Cluster) {
			c.Spec.Managed.Services.Additional = append(c.Spec.Managed.Services.Additional,
				v1.ManagedService{Name: "reads", SelectorType: v1.ServiceSelectorTypeRO})
		})
		check.Eventually(t, waitTimeout, "db-1 and db-2 carry db-reads", func(context.Context) (bool, error) {
			return slices.Contains(leaf(t, ns, "db-1-server-tls").DNSNames, "db-reads."+ns+".svc") &&
				slices.Contains(leaf(t, ns, "db-2-server-tls").DNSNames, "db-reads."+ns+".svc"), nil
		})
	})
	t.Run("an expiring CA is rolled with both CAs trusted until every certificate is under the new one", func(t *testing.T) {
		leaves := []string{"db-1-server-tls", "db-2-server-tls", "db-operator-client-tls", "db-replication-client-tls"}
		clk.SetTime(ca.NotAfter.Add(-certs.CARenewBefore + time.Hour))
		var rolled *x509.Certificate
		check.Eventually(t, waitTimeout, "a new CA is made and the old one kept as previous", func(context.Context) (bool, error) {
			d := secretData(t, ns, "db-ca")
			rolled, _ = certs.ParseCertificate(d["ca.crt"])
			prev, _ := certs.ParseCertificate(d["ca-previous.crt"])
			return rolled != nil && !rolled.Equal(ca) && prev != nil && prev.Equal(ca), nil
		})
		both := x509.NewCertPool()
		both.AddCert(ca)
		both.AddCert(rolled)
		for _, s := range leaves {
			check.Eventually(t, waitTimeout, s+" trusts both CAs", func(context.Context) (bool, error) {
				pool := x509.NewCertPool()
				return pool.AppendCertsFromPEM(secretData(t, ns, s)["ca.crt"]) && pool.Equal(both), nil
			})
		}
		clk.SetTime(clk.Now().Add(certs.PropagationDelay + time.Minute))
		for _, s := range leaves {
			check.Eventually(t, waitTimeout, s+" is issued by the new CA", func(context.Context) (bool, error) {
				return leaf(t, ns, s).CheckSignatureFrom(rolled) == nil, nil
			})
		}
		if _, ok := secretData(t, ns, "db-ca")["ca-previous.crt"]; !ok {
			t.Error("the previous CA is dropped before the new certificates can be in use")
		}
		clk.SetTime(clk.Now().Add(certs.PropagationDelay + time.Minute))
		check.Eventually(t, waitTimeout, "the previous CA is dropped", func(context.Context) (bool, error) {
			_, ok := secretData(t, ns, "db-ca")["ca-previous.crt"]
			return !ok, nil
		})
		for _, s := range leaves {
			check.Eventually(t, waitTimeout, s+" trusts the new CA alone", func(context.Context) (bool, error) {
				return string(secretData(t, ns, s)["ca.crt"]) == string(secretData(t, ns, "db-ca")["ca.crt"]), nil
			})
		}
		assertEvents(t, ns, "CARollEnded")
	})
}
