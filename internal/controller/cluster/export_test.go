package cluster

import (
	"context"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// ActFailover runs the failover act on c for the package's external tests.
func (r *Reconciler) ActFailover(ctx context.Context, c *v1.Cluster, w FailoverWork) ([]kit.Event, error) {
	return r.actFailover(ctx, &Observation{Cluster: c}, w)
}
