package cluster

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// SecretWork is what the Secrets step writes, in order: the missing user password Secrets, the
// CA Secret (a new cluster CA when RenewCA says why, or the end of a CA roll), then the leaf
// certificates.
//
// A CA is rolled without ever presenting a certificate to someone who does not trust its CA yet:
// the new CA is made and both CAs go into every Secret's ca.crt, the certificates kept; once
// every Pod has the bundle (certs.PropagationDelay after the new CA was made), the certificates
// are reissued under the new CA; once every Pod uses its new certificate (PropagationDelay after
// the last was issued), the previous CA is dropped from the bundle.
type SecretWork struct {
	// Users are the users whose password Secret does not exist: each gets one with a new
	// password. Existing ones are never touched.
	Users []string
	// CA is the cluster CA that signs the certificates; nil when a new one is made first.
	CA *certs.KeyPair
	// RenewCA, when not empty, says why a new CA is made (missing, unparsable, expiring).
	RenewCA string
	// PreviousCA is the PEM certificate of the CA a roll replaces, trusted beside the current
	// one; nil outside a roll.
	PreviousCA []byte
	// EndRoll rewrites the CA Secret without the previous CA: every certificate is under the
	// current one and in use.
	EndRoll bool
	// CASecret is the live CA Secret a new CA replaces the data of; nil when it is created.
	CASecret *corev1.Secret
	// Certificates are the leaf certificates to issue, in a stable order.
	Certificates []CertWork
	// AppTrust, when set, writes the CA's certificate (the trust bundle) into the application
	// Secret, which the Cluster created: clients verify the server with it.
	AppTrust *AppTrustWork
	// Metrics, when set, creates the metrics Secret or writes the trust bundle into it.
	Metrics *MetricsSecretWork
}

// AppTrustWork is the application Secret and the data it gets (specs.AppTrustData).
type AppTrustWork struct {
	Live *corev1.Secret
	Data map[string][]byte
}

// CertWork is one certificate Secret to issue, and why.
type CertWork struct {
	Secret  string
	Request certs.Request
	Reason  string
	// TrustOnly keeps the certificate and key and rewrites only ca.crt to the trust bundle.
	TrustOnly bool
	// Live is the Secret whose data the certificate replaces; nil when it is created.
	Live *corev1.Secret
}

// Trust is the cluster CA as the certificate plan sees it.
type Trust struct {
	// Current signs certificates; nil when a new CA is made first.
	Current *certs.KeyPair
	// Previous is the CA a roll replaces, still trusted; nil outside a roll.
	Previous *x509.Certificate
}

// bundle is the ca.crt every Secret carries: the current CA, then the previous one. Unknown
// (nil) while the current CA is still to be made.
func (t Trust) bundle() []byte {
	if t.Current == nil {
		return nil
	}
	var prev []byte
	if t.Previous != nil {
		prev = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: t.Previous.Raw})
	}
	return certs.Bundle(t.Current.CertPEM, prev)
}

// young says whether the roll began less than certs.PropagationDelay before now: not every Pod
// trusts the new CA yet, so certificates it signs are not handed out unless they must be.
func (t Trust) young(now time.Time) bool {
	return t.Previous != nil && (t.Current == nil || now.Before(certs.IssuedAt(t.Current.Cert).Add(certs.PropagationDelay)))
}

// LiveCert is what a certificate Secret holds now.
type LiveCert struct {
	Cert  []byte // tls.crt
	Trust []byte // ca.crt
}

// planSecrets decides the Secrets of c with the given instances at now from the live ones: users
// without a password Secret get one; the CA is renewed when missing, unparsable or expiring (an
// expiring one is rolled, staying trusted for a while); and every certificate planCertificates
// asks for is issued.
func planSecrets(c *v1.Cluster, instances []string, live map[string]*corev1.Secret, now time.Time) SecretWork {
	var w SecretWork
	for _, user := range specs.Users {
		if live[specs.UserSecretName(c.Name, user)] == nil {
			w.Users = append(w.Users, user)
		}
	}
	w.CASecret = live[specs.CASecretName(c.Name)]
	caData := dataOf(w.CASecret)
	w.RenewCA = certs.CANeedsRenewal(caData[specs.CACertKey], now)
	var trust Trust
	if w.RenewCA == "" {
		ca, err := certs.ParseKeyPair(caData[specs.CACertKey], caData[specs.CAKeyKey])
		if err == nil {
			w.CA, trust.Current = ca, ca
		} else {
			w.RenewCA = certs.ReasonUnparsable
		}
	}
	previousPEM := caData[specs.CAPreviousCertKey]
	if w.RenewCA == certs.ReasonExpiring {
		// The expiring CA is rolled: it stays trusted until every certificate is reissued.
		previousPEM = caData[specs.CACertKey]
	} else if w.RenewCA != "" {
		previousPEM = nil // a missing or unparsable CA signs nothing anyone should keep trusting
	}
	if prev, err := certs.ParseCertificate(previousPEM); err == nil {
		trust.Previous, w.PreviousCA = prev, previousPEM
	}
	existing := map[string]LiveCert{}
	for name := range certRequests(c, instances) {
		d := dataOf(live[name])
		existing[name] = LiveCert{Cert: d[certs.CertKey], Trust: d[certs.CAKey]}
	}
	w.Certificates = planCertificates(c, instances, trust, existing, now)
	if rollDone(trust, w.Certificates, existing, now) {
		w.EndRoll, w.PreviousCA = true, nil
		w.Certificates = planCertificates(c, instances, Trust{Current: trust.Current}, existing, now)
	}
	for i := range w.Certificates {
		w.Certificates[i].Live = live[w.Certificates[i].Secret]
	}
	appTrust := trust
	if w.EndRoll {
		appTrust = Trust{Current: trust.Current}
	}
	if app := live[specs.UserSecretName(c.Name, specs.UserApp)]; app != nil && metav1.IsControlledBy(app, c) {
		if data := specs.AppTrustData(app.Data, appTrust.bundle()); data != nil {
			w.AppTrust = &AppTrustWork{Live: app, Data: data}
		}
	}
	w.Metrics = planMetricsSecret(c, live, appTrust.bundle())
	return w
}

// rollDone says whether a CA roll can end at now: every certificate is signed by the current CA,
// none is to be reissued, and the newest was issued certs.PropagationDelay ago or more.
func rollDone(t Trust, planned []CertWork, existing map[string]LiveCert, now time.Time) bool {
	if t.Previous == nil || t.Current == nil || t.young(now) {
		return false
	}
	for _, cw := range planned {
		if !cw.TrustOnly {
			return false
		}
	}
	for _, lc := range existing {
		cert, err := certs.ParseCertificate(lc.Cert)
		if err != nil || cert.CheckSignatureFrom(t.Current.Cert) != nil ||
			now.Before(certs.IssuedAt(cert).Add(certs.PropagationDelay)) {
			return false
		}
	}
	return true
}

func dataOf(s *corev1.Secret) map[string][]byte {
	if s == nil {
		return nil
	}
	return s.Data
}

// certRequests lists every leaf certificate a Cluster needs: the operator's and the replication
// user's client certificates, and one server certificate per instance whose SANs cover the Pod,
// its headless Service and every role Service.
func certRequests(c *v1.Cluster, instances []string) map[string]certs.Request {
	out := map[string]certs.Request{
		specs.OperatorClientSecretName(c.Name):    {CommonName: certs.OperatorCommonName, Client: true},
		specs.ReplicationClientSecretName(c.Name): {CommonName: specs.UserReplication, Client: true},
	}
	roleServices := roleServiceNames(c)
	if !slices.Contains(roleServices, specs.MetricsServerName(c.Name)) {
		// Scrapers verify every instance under one name (the -r Service's, disabled or not).
		roleServices = append(roleServices, specs.MetricsServerName(c.Name))
	}
	for _, in := range instances {
		out[specs.ServerCertSecretName(in)] = certs.Request{CommonName: in,
			DNSNames: certs.ServerDNSNames(c.Namespace, in, roleServices)}
	}
	return out
}

// planCertificates returns the certificates to (re)issue at now, in a stable order: those
// missing, signed by neither CA of t, close to expiry, or whose names no longer match (a Service
// was added); during a CA roll, those of the previous CA once every Pod trusts the current one.
// A certificate kept whose ca.crt is not t's bundle gets the bundle alone. A nil t.Current is a
// CA about to be made: certificates of the previous CA are kept, the others reissued under it.
func planCertificates(c *v1.Cluster, instances []string, t Trust, existing map[string]LiveCert, now time.Time) []CertWork {
	reqs := certRequests(c, instances)
	names := make([]string, 0, len(reqs))
	for n := range reqs {
		names = append(names, n)
	}
	slices.Sort(names)
	bundle := t.bundle()
	var out []CertWork
	for _, n := range names {
		reason := leafReason(existing[n].Cert, t, reqs[n], now)
		trustOnly := reason == "" && (bundle == nil || !bytes.Equal(existing[n].Trust, bundle))
		if trustOnly {
			reason = certs.ReasonTrustDiffers
		}
		if reason != "" {
			out = append(out, CertWork{Secret: n, Request: reqs[n], Reason: reason, TrustOnly: trustOnly})
		}
	}
	return out
}

// leafReason is why the certificate certPEM must be reissued under t for req at now, "" to keep it.
func leafReason(certPEM []byte, t Trust, req certs.Request, now time.Time) string {
	if len(certPEM) == 0 {
		return certs.ReasonMissing
	}
	cert, err := certs.ParseCertificate(certPEM)
	if err != nil {
		return certs.ReasonUnparsable
	}
	switch {
	case t.Current != nil && cert.CheckSignatureFrom(t.Current.Cert) == nil:
		return certs.NeedsRenewal(certPEM, t.Current, req, now)
	case t.Previous != nil && cert.CheckSignatureFrom(t.Previous) == nil:
		if !t.young(now) {
			return certs.ReasonCARolled
		}
		// Kept until every Pod trusts the new CA, unless it cannot wait.
		return certs.NeedsRenewal(certPEM, &certs.KeyPair{Cert: t.Previous}, req, now)
	default:
		return certs.ReasonOtherIssuer
	}
}

// certInstances are the instances whose server certificates a reconcile of c may issue: the
// active ones and, while c has fewer than asked, the one planScaleUp would add next. gather reads
// their Secrets, so a Secret that already exists is never created twice.
func certInstances(c *v1.Cluster, pvcs []corev1.PersistentVolumeClaim, pods []corev1.Pod) []string {
	active, maxSerial := indexInstances(c, pvcs, pods)
	names := make([]string, 0, len(active)+1)
	for _, in := range active {
		names = append(names, in.Name)
	}
	if int32(len(active)) < c.Spec.Instances {
		names = append(names, specs.InstanceName(c.Name, max(c.Status.LatestGeneratedNode, maxSerial)+1))
	}
	return names
}

// secretNames are the Secrets planSecrets looks at for c with the given instances: the user
// passwords, the CA and every certificate, the certificates in name order.
func secretNames(c *v1.Cluster, instances []string) []string {
	var leaves []string
	for name := range certRequests(c, instances) {
		leaves = append(leaves, name)
	}
	slices.Sort(leaves)
	var out []string
	for _, user := range specs.Users {
		out = append(out, specs.UserSecretName(c.Name, user))
	}
	return append(append(out, specs.CASecretName(c.Name), specs.MetricsSecretName(c.Name)), leaves...)
}
