package certs

// ClusterDomain is the DNS suffix of the Kubernetes cluster the names are qualified with.
const ClusterDomain = "cluster.local"

// Common names of the client certificates.
const (
	// OperatorCommonName is the subject of the certificate the operator presents to instances.
	OperatorCommonName = "cloudnative-mysql-operator"
)

// ServiceDNSNames returns every name a client may use for a Service in namespace: the short
// name, <name>.<ns>, <name>.<ns>.svc and <name>.<ns>.svc.<ClusterDomain>.
func ServiceDNSNames(namespace, service string) []string {
	return []string{
		service,
		service + "." + namespace,
		service + "." + namespace + ".svc",
		service + "." + namespace + ".svc." + ClusterDomain,
	}
}

// ServerDNSNames returns the SANs of an instance's server certificate: the Pod's own DNS names
// (hostname and subdomain are both the instance name, so <instance>.<instance>.<ns>.svc), its
// headless Service, and every role Service (defaults and additional ones) that may route to it.
func ServerDNSNames(namespace, instance string, roleServices []string) []string {
	out := []string{
		instance + "." + instance + "." + namespace + ".svc",
		instance + "." + instance + "." + namespace + ".svc." + ClusterDomain,
	}
	out = append(out, ServiceDNSNames(namespace, instance)...)
	for _, s := range roleServices {
		out = append(out, ServiceDNSNames(namespace, s)...)
	}
	return out
}
