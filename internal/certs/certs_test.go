package certs

import (
	"crypto/x509"
	"slices"
	"testing"
	"time"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func mustCA(t *testing.T, at time.Time) *KeyPair {
	t.Helper()
	ca, err := NewCA("db-ca", at)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func mustIssue(t *testing.T, ca *KeyPair, req Request, at time.Time) *KeyPair {
	t.Helper()
	kp, err := Issue(ca, req, at)
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

func TestServerDNSNames(t *testing.T) {
	got := ServerDNSNames("ns", "db-2", []string{"db-rw", "db-lb"})
	for _, tc := range []struct{ rule, name string }{
		{"the Pod's DNS name", "db-2.db-2.ns.svc"},
		{"the Pod's fully qualified DNS name", "db-2.db-2.ns.svc.cluster.local"},
		{"the per-instance Service, short", "db-2"},
		{"the per-instance Service, namespace-qualified", "db-2.ns"},
		{"the per-instance Service, .svc", "db-2.ns.svc"},
		{"a role Service, short", "db-rw"},
		{"a role Service, .svc", "db-rw.ns.svc"},
		{"a role Service, fully qualified", "db-rw.ns.svc.cluster.local"},
		{"an additional Service", "db-lb.ns.svc"},
	} {
		if !slices.Contains(got, tc.name) {
			t.Errorf("%s: %s missing from %v", tc.rule, tc.name, got)
		}
	}
}

func TestIssue(t *testing.T) {
	ca := mustCA(t, now)
	server := mustIssue(t, ca, Request{CommonName: "db-1", DNSNames: []string{"db-1", "db-rw.ns.svc"}}, now)
	client := mustIssue(t, ca, Request{CommonName: "replication", Client: true}, now)
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	verify := func(kp *KeyPair, usage x509.ExtKeyUsage, name string) error {
		_, err := kp.Cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"the CA is a CA", ca.Cert.IsCA && ca.Cert.Subject.CommonName == "db-ca"},
		{"the CA lasts CAValidity", ca.Cert.NotAfter.Equal(now.Add(CAValidity))},
		{"a server certificate verifies for each SAN", verify(server, x509.ExtKeyUsageServerAuth, "db-rw.ns.svc") == nil},
		{"a server certificate does not verify for other names", verify(server, x509.ExtKeyUsageServerAuth, "db-ro.ns.svc") != nil},
		{"a server certificate is not a client certificate", verify(server, x509.ExtKeyUsageClientAuth, "") != nil},
		{"a client certificate verifies for client auth", verify(client, x509.ExtKeyUsageClientAuth, "") == nil},
		{"a client certificate carries the user as its CN", client.Cert.Subject.CommonName == "replication"},
		{"a leaf lasts LeafValidity", server.Cert.NotAfter.Equal(now.Add(LeafValidity))},
		{"a leaf is backdated against clock skew", server.Cert.NotBefore.Before(now)},
		{"the Secret data carries tls.crt, tls.key, ca.crt", len(server.SecretData(ca)) == 3 &&
			string(server.SecretData(ca)[CAKey]) == string(ca.CertPEM)},
	} {
		if !tc.ok {
			t.Errorf("rule broken: %s", tc.rule)
		}
	}
	reparsed, err := ParseKeyPair(server.CertPEM, server.KeyPEM)
	if err != nil || !reparsed.Cert.Equal(server.Cert) {
		t.Errorf("a key pair round-trips through PEM: %v", err)
	}
	nearCAExpiry := now.Add(CAValidity - 24*time.Hour)
	if late := mustIssue(t, ca, Request{CommonName: "x"}, nearCAExpiry); late.Cert.NotAfter.After(ca.Cert.NotAfter) {
		t.Errorf("a leaf never outlives its CA: %v > %v", late.Cert.NotAfter, ca.Cert.NotAfter)
	}
}

func TestNeedsRenewal(t *testing.T) {
	ca := mustCA(t, now)
	otherCA := mustCA(t, now)
	req := Request{CommonName: "db-1", DNSNames: []string{"a", "b"}}
	cert := mustIssue(t, ca, req, now).CertPEM
	for _, tc := range []struct {
		rule    string
		certPEM []byte
		req     Request
		at      time.Time
		want    string
	}{
		{"a fresh certificate is kept", cert, req, now, ""},
		{"SAN order does not matter", cert, Request{CommonName: "db-1", DNSNames: []string{"b", "a"}}, now, ""},
		{"kept until the renewal threshold", cert, req, now.Add(LeafValidity - RenewBefore - time.Minute), ""},
		{"renewed within the threshold of expiry", cert, req, now.Add(LeafValidity - RenewBefore + time.Minute), ReasonExpiring},
		{"renewed once expired", cert, req, now.Add(LeafValidity + time.Hour), ReasonExpiring},
		{"issued when missing", nil, req, now, ReasonMissing},
		{"reissued when unparsable", []byte("junk"), req, now, ReasonUnparsable},
		{"reissued when signed by another CA", mustIssue(t, otherCA, req, now).CertPEM, req, now, ReasonOtherIssuer},
		{"reissued when a SAN is added (a new Service)", cert, Request{CommonName: "db-1", DNSNames: []string{"a", "b", "c"}}, now, ReasonNamesDiffer},
		{"reissued when a SAN is removed", cert, Request{CommonName: "db-1", DNSNames: []string{"a"}}, now, ReasonNamesDiffer},
		{"reissued when the usage differs", cert, Request{CommonName: "db-1", DNSNames: []string{"a", "b"}, Client: true}, now, ReasonNamesDiffer},
	} {
		if got := NeedsRenewal(tc.certPEM, ca, tc.req, tc.at); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.rule, got, tc.want)
		}
	}
}

func TestCANeedsRenewal(t *testing.T) {
	ca := mustCA(t, now)
	leaf := mustIssue(t, ca, Request{CommonName: "x"}, now)
	for _, tc := range []struct {
		rule    string
		certPEM []byte
		at      time.Time
		want    string
	}{
		{"a fresh CA is kept", ca.CertPEM, now, ""},
		{"created when missing", nil, now, ReasonMissing},
		{"a leaf is not a CA", leaf.CertPEM, now, ReasonUnparsable},
		{"renewed within its threshold", ca.CertPEM, now.Add(CAValidity - CARenewBefore + time.Hour), ReasonExpiring},
	} {
		if got := CANeedsRenewal(tc.certPEM, tc.at); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.rule, got, tc.want)
		}
	}
}
