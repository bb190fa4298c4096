package instances

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// RoleController asks an instance manager to change its mysqld's role during a failover. MTLS
// implements it; without it the operator cannot stop IO threads or demote, and a failover
// waits at that step.
type RoleController interface {
	// StopReplicaIO stops the replication IO thread of the instance of pod (its applier keeps
	// running), so its source collects no more semi-sync acknowledgements from it.
	StopReplicaIO(ctx context.Context, c *v1.Cluster, pod corev1.Pod) error
	// Demote turns the instance of pod read-only (super_read_only), ends its client sessions and
	// releases the primary Lease if it holds it.
	Demote(ctx context.Context, c *v1.Cluster, pod corev1.Pod) error
}

// StopReplicaIO implements RoleController over mTLS.
func (s MTLS) StopReplicaIO(ctx context.Context, c *v1.Cluster, pod corev1.Pod) error {
	cl, err := s.client(ctx, c)
	if err != nil {
		return err
	}
	return cl.StopReplicaIO(ctx, instanceTarget(pod))
}

// Demote implements RoleController over mTLS.
func (s MTLS) Demote(ctx context.Context, c *v1.Cluster, pod corev1.Pod) error {
	cl, err := s.client(ctx, c)
	if err != nil {
		return err
	}
	return cl.Demote(ctx, instanceTarget(pod))
}
