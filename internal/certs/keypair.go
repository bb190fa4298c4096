package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// Validity periods and the renewal threshold.
const (
	// CAValidity is how long a cluster CA is valid.
	CAValidity = 10 * 365 * 24 * time.Hour
	// LeafValidity is how long server and client certificates are valid.
	LeafValidity = 90 * 24 * time.Hour
	// RenewBefore is how long before expiry a certificate is reissued.
	RenewBefore = 7 * 24 * time.Hour
	// CARenewBefore is how long before expiry the CA is reissued (and with it every leaf).
	CARenewBefore = 90 * 24 * time.Hour
	// backdate tolerates clock skew between the operator and the instances.
	backdate = 5 * time.Minute
)

// Secret data keys, the kubernetes.io/tls convention plus the CA.
const (
	CertKey = "tls.crt"
	KeyKey  = "tls.key"
	CAKey   = "ca.crt"
)

// ErrInvalid is returned for PEM data that is not a certificate or key of this package.
var ErrInvalid = errors.New("invalid certificate material")

// KeyPair is a certificate with its private key, parsed and in PEM.
type KeyPair struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	KeyPEM  []byte
}

// ParseKeyPair parses PEM certificate and PKCS#8 key data.
func ParseKeyPair(certPEM, keyPEM []byte) (*KeyPair, error) {
	cert, err := ParseCertificate(certPEM)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM key", ErrInvalid)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: parsing the key: %w", ErrInvalid, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: the key cannot sign", ErrInvalid)
	}
	return &KeyPair{Cert: cert, Key: signer, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// ParseCertificate parses the first PEM certificate of data.
func ParseCertificate(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%w: no PEM certificate", ErrInvalid)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: parsing the certificate: %w", ErrInvalid, err)
	}
	return cert, nil
}

// sign creates a certificate from tmpl signed by parent (self-signed when parent is nil).
func sign(tmpl *x509.Certificate, parent *KeyPair) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating a key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("drawing a serial number: %w", err)
	}
	tmpl.SerialNumber = serial
	issuer, signer := tmpl, crypto.Signer(key)
	if parent != nil {
		issuer, signer = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, key.Public(), signer)
	if err != nil {
		return nil, fmt.Errorf("signing %q: %w", tmpl.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding the key: %w", err)
	}
	return ParseKeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
}

// SecretData is the Secret content of a leaf certificate: tls.crt, tls.key and the CA's ca.crt.
func (kp *KeyPair) SecretData(ca *KeyPair) map[string][]byte {
	return map[string][]byte{CertKey: kp.CertPEM, KeyKey: kp.KeyPEM, CAKey: ca.CertPEM}
}
