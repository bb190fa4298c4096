// Package manifests holds the tests that install config/ the way a user would (kustomize build,
// server-side apply with the real kubectl) on the real API server: the operator's Deployment,
// its RBAC and the samples.
package manifests
