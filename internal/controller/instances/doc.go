// Package instances is what the operator learns about a Cluster's instance Pods: whether the kubelet
// reports one ready, and the instance managers' own reports, asked over mTLS with the operator's
// client certificate (StatusSource, MTLS), which also carries the runtime semi-sync count to the
// primary (SemiSyncSetter). The Cluster and Backup controllers both use it.
package instances
