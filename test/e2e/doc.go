// Package e2e runs the operator the way users run it: as Pods of a real single-node Kubernetes
// started by hack/localcluster.sh (etcd, the control plane, containerd, kubelet and kube-proxy in
// their own network namespace, images built locally and imported).
//
// The tests carry the e2e build tag, so `go test ./...` and `go vet ./...` leave them out. Run, as
// root:
//
//	go test -tags e2e -count=1 -timeout 30m ./test/e2e/ -v
//
// TestMain brings the local cluster up once (a no-op when it is already up), installs the operator
// from config/default with kubectl apply --server-side -k, runs the tests, each in its own
// namespace, and brings the cluster down again unless CNM_E2E_KEEP=1 or it was already up. The
// Helm tests (helm_test.go, with $CNM_HELM) replace that install with the chart's for their
// duration, its CRDs kept, and install config/default again at their end.
package e2e
