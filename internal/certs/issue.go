package certs

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"time"
)

// Request describes a certificate to issue or check.
type Request struct {
	// CommonName of the subject (the MySQL user name for client certificates).
	CommonName string
	// DNSNames are the SANs of a server certificate; empty for client certificates.
	DNSNames []string
	// IPAddresses are IP SANs of a server certificate (for servers reached by address, as in
	// tests on loopback addresses); the operator's certificates use DNS names only.
	IPAddresses []net.IP
	// Client issues a client-authentication certificate instead of a server one.
	Client bool
	// Validity is how long a leaf is valid; 0 means LeafValidity (short-lived certificates are
	// for tests of renewal).
	Validity time.Duration
}

// NewCA returns a self-signed CA valid from now (minus a small backdate) for CAValidity.
func NewCA(commonName string, now time.Time) (*KeyPair, error) {
	return sign(&x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(CAValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}, nil)
}

// Issue signs a leaf certificate for req with ca, valid from now for req.Validity, by default
// LeafValidity (never past the CA's own expiry).
func Issue(ca *KeyPair, req Request, now time.Time) (*KeyPair, error) {
	validity := req.Validity
	if validity <= 0 {
		validity = LeafValidity
	}
	notAfter := now.Add(validity)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	usage := x509.ExtKeyUsageServerAuth
	if req.Client {
		usage = x509.ExtKeyUsageClientAuth
	}
	return sign(&x509.Certificate{
		Subject:               pkix.Name{CommonName: req.CommonName},
		DNSNames:              append([]string(nil), req.DNSNames...),
		IPAddresses:           append([]net.IP(nil), req.IPAddresses...),
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{usage},
		BasicConstraintsValid: true,
	}, ca)
}
