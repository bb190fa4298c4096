package cluster

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// SecretWork is what the Secrets step writes, in order: the missing user password Secrets, a new
// cluster CA when RenewCA says why, then the leaf certificates.
type SecretWork struct {
	// Users are the users whose password Secret does not exist: each gets one with a new
	// password. Existing ones are never touched.
	Users []string
	// CA is the cluster CA that signs the certificates; nil when a new one is made first.
	CA *certs.KeyPair
	// RenewCA, when not empty, says why a new CA is made (missing, unparsable, expiring).
	RenewCA string
	// CASecret is the live CA Secret a new CA replaces the data of; nil when it is created.
	CASecret *corev1.Secret
	// Certificates are the leaf certificates to issue, in a stable order.
	Certificates []CertWork
}

// CertWork is one certificate Secret to issue, and why.
type CertWork struct {
	Secret  string
	Request certs.Request
	Reason  string
	// Live is the Secret whose data the certificate replaces; nil when it is created.
	Live *corev1.Secret
}

// planSecrets decides the Secrets of c with the given instances at now from the live ones: users
// without a password Secret get one; the CA is renewed when missing, unparsable or expiring; and
// every certificate planCertificates asks for is issued.
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
	if w.RenewCA == "" {
		ca, err := certs.ParseKeyPair(caData[specs.CACertKey], caData[specs.CAKeyKey])
		if err == nil {
			w.CA = ca
		} else {
			w.RenewCA = certs.ReasonUnparsable
		}
	}
	existing := map[string][]byte{}
	for name := range certRequests(c, instances) {
		existing[name] = dataOf(live[name])[certs.CertKey]
	}
	w.Certificates = planCertificates(c, instances, w.CA, existing, now)
	for i := range w.Certificates {
		w.Certificates[i].Live = live[w.Certificates[i].Secret]
	}
	return w
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
	for _, in := range instances {
		out[specs.ServerCertSecretName(in)] = certs.Request{CommonName: in,
			DNSNames: certs.ServerDNSNames(c.Namespace, in, roleServices)}
	}
	return out
}

// planCertificates returns the certificates to (re)issue at now, in a stable order: those missing,
// not signed by ca, close to expiry, or whose names no longer match (a Service was added).
// existing maps Secret names to their current tls.crt. A nil ca is a CA about to be made: every
// certificate is reissued under it.
func planCertificates(c *v1.Cluster, instances []string, ca *certs.KeyPair, existing map[string][]byte, now time.Time) []CertWork {
	reqs := certRequests(c, instances)
	names := make([]string, 0, len(reqs))
	for n := range reqs {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []CertWork
	for _, n := range names {
		reason := reasonUnderNewCA(existing[n])
		if ca != nil {
			reason = certs.NeedsRenewal(existing[n], ca, reqs[n], now)
		}
		if reason != "" {
			out = append(out, CertWork{Secret: n, Request: reqs[n], Reason: reason})
		}
	}
	return out
}

// reasonUnderNewCA is why a certificate is reissued under a CA not made yet: it is missing,
// unparsable, or (its key being new) signed by another CA; certs.NeedsRenewal would say the same.
func reasonUnderNewCA(certPEM []byte) string {
	if len(certPEM) == 0 {
		return certs.ReasonMissing
	}
	if _, err := certs.ParseCertificate(certPEM); err != nil {
		return certs.ReasonUnparsable
	}
	return certs.ReasonOtherIssuer
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
	return append(append(out, specs.CASecretName(c.Name)), leaves...)
}
