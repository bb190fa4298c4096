package specs

import (
	"fmt"
	"io"
	"math/big"

	corev1 "k8s.io/api/core/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
)

// Password length and alphabet: 32 characters of 62 give about 190 bits, with nothing a shell,
// a my.cnf or a connection URI would need to quote.
const (
	passwordLength   = 32
	passwordAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

// GeneratePassword draws a password from random (crypto/rand.Reader in production), each
// character uniform over the alphabet.
func GeneratePassword(random io.Reader) (string, error) {
	max := big.NewInt(int64(len(passwordAlphabet)))
	out := make([]byte, passwordLength)
	for i := range out {
		n, err := randInt(random, max)
		if err != nil {
			return "", fmt.Errorf("drawing a password: %w", err)
		}
		out[i] = passwordAlphabet[n]
	}
	return string(out), nil
}

// randInt is crypto/rand.Int without the import cycle on the reader: uniform in [0, max).
func randInt(random io.Reader, max *big.Int) (int64, error) {
	var b [1]byte
	limit := 256 - 256%max.Int64() // reject bytes that would bias the result
	for {
		if _, err := io.ReadFull(random, b[:]); err != nil {
			return 0, err
		}
		if int64(b[0]) < limit {
			return int64(b[0]) % max.Int64(), nil
		}
	}
}

// BuildUserSecret returns the basic-auth Secret of one MySQL account. The controller creates it
// once and never overwrites it, so a password survives every reconcile and operator upgrade.
func BuildUserSecret(c *mysqlv1alpha1.Cluster, user, password string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: objectMeta(c, UserSecretName(c.Name, user)),
		Type:       corev1.SecretTypeBasicAuth,
		Data: map[string][]byte{
			corev1.BasicAuthUsernameKey: []byte(user),
			corev1.BasicAuthPasswordKey: []byte(password),
		},
	}
}

// BuildTLSSecret returns a kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt) of a certificate
// issued for c.
func BuildTLSSecret(c *mysqlv1alpha1.Cluster, name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: objectMeta(c, name), Type: corev1.SecretTypeTLS, Data: data}
}

// BuildCASecret returns the Opaque Secret holding the cluster CA: ca.crt and ca.key. Only the
// operator reads ca.key; Pods mount ca.crt through their server certificate Secret.
func BuildCASecret(c *mysqlv1alpha1.Cluster, certPEM, keyPEM []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: objectMeta(c, CASecretName(c.Name)),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{CACertKey: certPEM, CAKeyKey: keyPEM},
	}
}

// BuildRollingCASecret is BuildCASecret during a CA roll: previousPEM, the CA being replaced,
// stays trusted (under ca-previous.crt) until every certificate is reissued; nil ends the roll.
func BuildRollingCASecret(c *mysqlv1alpha1.Cluster, certPEM, keyPEM, previousPEM []byte) *corev1.Secret {
	s := BuildCASecret(c, certPEM, keyPEM)
	if len(previousPEM) > 0 {
		s.Data[CAPreviousCertKey] = previousPEM
	}
	return s
}

// Keys of the CA Secret.
const (
	CACertKey = "ca.crt"
	CAKeyKey  = "ca.key"
	// CAPreviousCertKey holds the CA a roll replaces, still trusted until every certificate is
	// reissued under the new one; absent outside a roll.
	CAPreviousCertKey = "ca-previous.crt"
)

// CATrust is the trust bundle of a CA Secret's data: the current CA and, during a roll, the
// previous one.
func CATrust(data map[string][]byte) []byte {
	return certs.Bundle(data[CACertKey], data[CAPreviousCertKey])
}
