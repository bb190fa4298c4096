package certs

import (
	"bytes"
	"crypto/x509"
	"time"
)

// PropagationDelay is how long after the operator writes a Secret every Pod is taken to use its
// new content: the kubelet refreshes mounted Secrets within about a minute and a half, and the
// instance managers re-read the files every few seconds. A CA roll waits this long between its
// steps, so that nobody is ever presented a certificate of a CA it does not trust yet.
const PropagationDelay = 5 * time.Minute

// Renewal reasons of a CA roll.
const (
	// ReasonTrustDiffers: the Secret's ca.crt is not the trust bundle (a CA roll began or ended);
	// only ca.crt is rewritten, the certificate and key are kept.
	ReasonTrustDiffers = "trusted CAs differ"
	// ReasonCARolled: the certificate is signed by the previous CA, whose successor every Pod
	// trusts by now.
	ReasonCARolled = "signed by the previous CA"
)

// IssuedAt is when cert was issued (its NotBefore, backdated against clock skew, moved back).
func IssuedAt(cert *x509.Certificate) time.Time { return cert.NotBefore.Add(backdate) }

// Bundle concatenates PEM CA certificates into the trust bundle written as ca.crt, the current
// CA first; empty entries are left out.
func Bundle(cas ...[]byte) []byte {
	var out []byte
	for _, ca := range cas {
		ca = bytes.TrimSpace(ca)
		if len(ca) == 0 {
			continue
		}
		out = append(append(out, ca...), '\n')
	}
	return out
}
