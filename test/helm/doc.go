// Package helm tests the Helm chart charts/cloudnative-mysql with the real Helm client
// ($CNM_HELM, built by `bash hack/substrate.sh helm`): `helm lint --strict`, and `helm template`
// with the default values (the same objects as dist/install.yaml, Helm's labels apart), the
// namespace-scoped mode (those of dist/install-namespaced.yaml less the cluster administrator's
// part), monitoring on (with fixture monitoring files), a custom image and every flag changed.
// Every rendered object is decoded strictly with the Kubernetes scheme, and the Deployment's
// arguments are parsed by the operator's own command. Installing the chart on a node is the e2e
// suite's (test/e2e/helm_test.go).
package helm
