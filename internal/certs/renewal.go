package certs

import (
	"crypto/x509"
	"slices"
	"time"
)

// Renewal reasons; empty means the certificate is fine.
const (
	ReasonMissing     = "missing"
	ReasonUnparsable  = "unparsable"
	ReasonOtherIssuer = "not signed by the current CA"
	ReasonExpiring    = "expiring"
	ReasonNamesDiffer = "names differ"
)

// CANeedsRenewal says why the CA in certPEM must be reissued at now, or "" when it is good.
func CANeedsRenewal(certPEM []byte, now time.Time) string {
	if len(certPEM) == 0 {
		return ReasonMissing
	}
	cert, err := ParseCertificate(certPEM)
	if err != nil || !cert.IsCA {
		return ReasonUnparsable
	}
	if now.Add(CARenewBefore).After(cert.NotAfter) {
		return ReasonExpiring
	}
	return ""
}

// NeedsRenewal says why the leaf certificate in certPEM must be reissued for req at now, or ""
// when it is good: it must exist, be signed by ca, not expire within RenewBefore, and carry
// exactly the requested common name, SANs and usage.
func NeedsRenewal(certPEM []byte, ca *KeyPair, req Request, now time.Time) string {
	if len(certPEM) == 0 {
		return ReasonMissing
	}
	cert, err := ParseCertificate(certPEM)
	if err != nil {
		return ReasonUnparsable
	}
	if cert.CheckSignatureFrom(ca.Cert) != nil {
		return ReasonOtherIssuer
	}
	if now.Add(RenewBefore).After(cert.NotAfter) {
		return ReasonExpiring
	}
	usage := x509.ExtKeyUsageServerAuth
	if req.Client {
		usage = x509.ExtKeyUsageClientAuth
	}
	if cert.Subject.CommonName != req.CommonName || !sameSet(cert.DNSNames, req.DNSNames) ||
		!slices.Equal(cert.ExtKeyUsage, []x509.ExtKeyUsage{usage}) {
		return ReasonNamesDiffer
	}
	return ""
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
