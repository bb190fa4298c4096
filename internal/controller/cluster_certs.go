package controller

import (
	"slices"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// certWork is one certificate Secret to issue, and why.
type certWork struct {
	Secret  string
	Request certs.Request
	Reason  string
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
// existing maps Secret names to their current tls.crt.
func planCertificates(c *v1.Cluster, instances []string, ca *certs.KeyPair, existing map[string][]byte, now time.Time) []certWork {
	reqs := certRequests(c, instances)
	names := make([]string, 0, len(reqs))
	for n := range reqs {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []certWork
	for _, n := range names {
		if reason := certs.NeedsRenewal(existing[n], ca, reqs[n], now); reason != "" {
			out = append(out, certWork{Secret: n, Request: reqs[n], Reason: reason})
		}
	}
	return out
}
