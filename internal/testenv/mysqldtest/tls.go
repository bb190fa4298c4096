package mysqldtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Certificates are valid over a fixed, wide window so that nothing depends on the clock.
var (
	certNotBefore = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	certNotAfter  = time.Date(2099, 12, 31, 0, 0, 0, 0, time.UTC)
)

// CA is a test certificate authority. The servers started together share one, so that they can
// verify each other's certificates when they replicate or clone.
type CA struct {
	CertPEM []byte
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
}

// NewCA generates a certificate authority with a fresh key.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "cloudnative-mysql test CA"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := signCert(tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("self-signing the CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing the CA certificate: %w", err)
	}
	return &CA{CertPEM: pemBlock("CERTIFICATE", der), cert: cert, key: key}, nil
}

// Issue signs a certificate for the given common name and subject alternative names. IP
// addresses among the names become IP SANs, the others DNS SANs. It returns PEM certificate and
// PKCS#8 key.
func (ca *CA) Issue(commonName string, usage x509.ExtKeyUsage, names ...string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating a key for %s: %w", commonName, err)
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := signCert(tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the certificate of %s: %w", commonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the key of %s: %w", commonName, err)
	}
	return pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", keyDER), nil
}

func signCert(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, fmt.Errorf("drawing a serial number: %w", err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = certNotBefore, certNotAfter
	return x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

// TLSFiles is the TLS material of one server: host paths of the files mysqld reads, and the PEM
// bytes a client needs.
type TLSFiles struct {
	CAFile         string
	CertFile       string // server certificate
	KeyFile        string // server key
	ClientCertFile string
	ClientKeyFile  string

	CAPEM         []byte
	ClientCertPEM []byte
	ClientKeyPEM  []byte
}

// writeTLSFiles issues a server certificate for host and a client certificate, and writes them
// with the CA certificate into dir.
func writeTLSFiles(ca *CA, dir, host string) (TLSFiles, error) {
	serverCert, serverKey, err := ca.Issue("mysqld "+host, x509.ExtKeyUsageServerAuth, host, "127.0.0.1", "localhost")
	if err != nil {
		return TLSFiles{}, err
	}
	clientCert, clientKey, err := ca.Issue("root", x509.ExtKeyUsageClientAuth)
	if err != nil {
		return TLSFiles{}, err
	}
	f := TLSFiles{
		CAFile:         filepath.Join(dir, "ca.pem"),
		CertFile:       filepath.Join(dir, "server-cert.pem"),
		KeyFile:        filepath.Join(dir, "server-key.pem"),
		ClientCertFile: filepath.Join(dir, "client-cert.pem"),
		ClientKeyFile:  filepath.Join(dir, "client-key.pem"),
		CAPEM:          ca.CertPEM,
		ClientCertPEM:  clientCert,
		ClientKeyPEM:   clientKey,
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return TLSFiles{}, fmt.Errorf("creating %s: %w", dir, err)
	}
	for path, data := range map[string][]byte{
		f.CAFile: ca.CertPEM, f.CertFile: serverCert, f.KeyFile: serverKey,
		f.ClientCertFile: clientCert, f.ClientKeyFile: clientKey,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return TLSFiles{}, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return f, nil
}

// clientTLSConfig trusts the CA only, verifies that the server certificate names host and
// presents the client certificate.
func clientTLSConfig(f TLSFiles, host string) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(f.CAPEM) {
		return nil, fmt.Errorf("no certificate in the CA PEM")
	}
	pair, err := tls.X509KeyPair(f.ClientCertPEM, f.ClientKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading the client certificate: %w", err)
	}
	return &tls.Config{
		RootCAs:      pool,
		Certificates: []tls.Certificate{pair},
		ServerName:   host,
		MinVersion:   tls.VersionTLS12,
	}, nil
}
