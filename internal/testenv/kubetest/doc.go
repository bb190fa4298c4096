// Package kubetest starts the real control plane the operator's tests run against: etcd and
// kube-apiserver through controller-runtime's envtest, optionally kube-controller-manager (garbage
// collector, Job, TTL, EndpointSlice and namespace controllers) pointed at it, with this project's
// CRDs installed. The binaries come from the cache that hack/substrate.sh fills.
package kubetest
