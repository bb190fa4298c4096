package instance

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// clusterWatchRetry is how long ClusterWatch waits before it watches again after a failure.
const clusterWatchRetry = time.Second

// ClusterWatch wakes the role reconciler as soon as the Cluster changes (a new targetPrimary, a
// promotion recorded), so that a switchover does not wait for the next period of its poll,
// which stays as the fallback when the watch fails.
type ClusterWatch struct {
	Client  client.WithWatch
	Cluster types.NamespacedName
	// Wake receives a value, without blocking, at each change.
	Wake  chan<- struct{}
	Clock clock.Clock
	Log   logr.Logger
}

// Run watches until ctx ends, watching again clusterWatchRetry after a failure or an end.
func (w *ClusterWatch) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := w.watchOnce(ctx); err != nil && ctx.Err() == nil {
			w.Log.V(1).Info("watching the Cluster failed; the role reconciler polls meanwhile", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-w.Clock.After(clusterWatchRetry):
		}
	}
}

// watchOnce watches the one Cluster (by a field selector on its name, which its Role allows)
// until the watch ends, waking the reconciler at each event.
func (w *ClusterWatch) watchOnce(ctx context.Context) error {
	var list v1alpha1.ClusterList
	wi, err := w.Client.Watch(ctx, &list, client.InNamespace(w.Cluster.Namespace),
		client.MatchingFields{"metadata.name": w.Cluster.Name})
	if err != nil {
		return fmt.Errorf("watching Cluster %s: %w", w.Cluster, err)
	}
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return nil
			}
			if ev.Type == watch.Error {
				return fmt.Errorf("watching Cluster %s: %w", w.Cluster, apierrors.FromObject(ev.Object))
			}
			select {
			case w.Wake <- struct{}{}:
			default:
			}
		}
	}
}
