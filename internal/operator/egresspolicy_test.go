package operator_test

import (
	"bytes"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// destination is where the operator connects: an address, and the Pod's labels and its
// namespace's when it is a Pod.
type destination struct {
	ip        string
	pod, ns   map[string]string
	port      int
	protocol  corev1.Protocol
	wantAllow bool
}

// egressAllows reports whether p lets its Pods connect to d, as the NetworkPolicy API defines
// it: some rule whose ports include d's and whose peers include d (or that names no peer). An
// ipBlock is taken to match Pod addresses too (network plugins differ).
func egressAllows(t *testing.T, p networkingv1.NetworkPolicy, d destination) bool {
	t.Helper()
	for _, r := range p.Spec.Egress {
		portOK := len(r.Ports) == 0
		for _, port := range r.Ports {
			proto := corev1.ProtocolTCP
			if port.Protocol != nil {
				proto = *port.Protocol
			}
			portOK = portOK || (proto == d.protocol && port.Port.IntValue() == d.port)
		}
		if !portOK {
			continue
		}
		if len(r.To) == 0 {
			return true
		}
		for _, peer := range r.To {
			// A connection to an IPv4-mapped address leaves as IPv4: the policy sees the IPv4 address.
			if peer.IPBlock != nil && inBlock(peer.IPBlock, netip.MustParseAddr(d.ip).Unmap()) {
				return true
			}
			if peer.IPBlock == nil && d.pod != nil && peer.NamespaceSelector != nil &&
				selects(t, peer.NamespaceSelector, d.ns) && (peer.PodSelector == nil || selects(t, peer.PodSelector, d.pod)) {
				return true
			}
		}
	}
	return false
}

func inBlock(b *networkingv1.IPBlock, ip netip.Addr) bool {
	if !netip.MustParsePrefix(b.CIDR).Contains(ip) {
		return false
	}
	return !slices.ContainsFunc(b.Except, func(e string) bool { return netip.MustParsePrefix(e).Contains(ip) })
}

// TestOperatorEgressPolicy: the operator's egress policy in config/samples/networkpolicy.yaml
// selects the operator's Pods (as config/manager labels them) and lets them reach DNS, the
// instances' control API and administrative port, the API server and object stores inside and
// outside the cluster, and nothing link-local on the ports of the API server and object stores:
// not the metadata service at 169.254.169.254, not fe80::/10. The API server accepts the policy
// in TestNetworkPolicySample.
func TestOperatorEgressPolicy(t *testing.T) {
	var egress *networkingv1.NetworkPolicy
	for _, doc := range bytes.Split(readFile(t, filepath.Join("..", "..", "config", "samples", "networkpolicy.yaml")), []byte("\n---")) {
		var p networkingv1.NetworkPolicy
		check.Must(t, yaml.UnmarshalStrict(doc, &p))
		if slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
			egress = &p
		}
	}
	if egress == nil {
		t.Fatal("no egress policy in config/samples/networkpolicy.yaml")
	}
	var deployment appsv1.Deployment
	for _, doc := range bytes.Split(readFile(t, filepath.Join("..", "..", "config", "manager", "manager.yaml")), []byte("\n---")) {
		if bytes.Contains(doc, []byte("kind: Deployment")) {
			check.Must(t, yaml.Unmarshal(doc, &deployment))
		}
	}
	operatorPod := deployment.Spec.Template.Labels
	if !selects(t, &egress.Spec.PodSelector, operatorPod) || egress.Namespace != operatorNamespace ||
		!slices.Equal(egress.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}) {
		t.Errorf("the egress policy selects the operator's Pods in %s, for egress only", operatorNamespace)
	}
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "apps"}}
	instance := specs.BuildPod(c, 1, specs.PodOptions{OperatorImage: "op", Routable: true}).Labels
	apps := map[string]string{"kubernetes.io/metadata.name": "apps"}
	storage := map[string]string{"kubernetes.io/metadata.name": "storage"}
	minio := map[string]string{"app": "minio"}
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	for name, d := range map[string]destination{
		"DNS at the kube-dns Service":                {ip: "10.96.0.10", port: 53, protocol: udp, wantAllow: true},
		"DNS over TCP":                               {ip: "10.96.0.10", port: 53, protocol: tcp, wantAllow: true},
		"DNS at a node-local cache on 169.254.20.10": {ip: "169.254.20.10", port: 53, protocol: udp, wantAllow: true},
		"the API server's Service":                   {ip: "10.96.0.1", port: 443, protocol: tcp, wantAllow: true},
		"the API server on a node":                   {ip: "172.18.0.2", port: 6443, protocol: tcp, wantAllow: true},
		"an object store on the internet":            {ip: "52.216.8.1", port: 443, protocol: tcp, wantAllow: true},
		"an http object store on a private network":  {ip: "192.168.1.20", port: 80, protocol: tcp, wantAllow: true},
		"an object store on an IPv6 address":         {ip: "2600:1f18::1", port: 443, protocol: tcp, wantAllow: true},
		"an object store running as a Pod":           {ip: "10.244.1.5", pod: minio, ns: storage, port: 9000, protocol: tcp, wantAllow: true},
		"an instance's control API":                  {ip: "10.244.2.7", pod: instance, ns: apps, port: specs.ManagerPort, protocol: tcp, wantAllow: true},
		"an instance's administrative port":          {ip: "10.244.2.7", pod: instance, ns: apps, port: specs.AdminPort, protocol: tcp, wantAllow: true},
		"the metadata service over http":             {ip: "169.254.169.254", port: 80, protocol: tcp},
		"the metadata service over https":            {ip: "169.254.169.254", port: 443, protocol: tcp},
		"another link-local address on the S3 port":  {ip: "169.254.10.1", port: 9000, protocol: tcp},
		"an IPv6 link-local address":                 {ip: "fe80::1", port: 443, protocol: tcp},
		"an IPv4-mapped metadata address":            {ip: "::ffff:169.254.169.254", port: 80, protocol: tcp},
		"an instance's mysql port (never used)":      {ip: "10.244.2.7", pod: instance, ns: apps, port: specs.MySQLPort, protocol: tcp},
		"an object store on a port the policy lacks": {ip: "52.216.8.1", port: 8443, protocol: tcp},
	} {
		if got := egressAllows(t, *egress, d); got != d.wantAllow {
			t.Errorf("%s (%s:%d/%s): allowed %v, want %v", name, d.ip, d.port, d.protocol, got, d.wantAllow)
		}
	}
}
