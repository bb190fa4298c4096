package retention

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	retentionpolicy "github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
)

// passInput is what a due pass reads besides the Cluster, fresh from the API server.
type passInput struct {
	Clusters []v1.Cluster
	Backups  []v1.Backup
	Config   objectstore.Config
}

// gather reads the Cluster through the cache. When the cache shows a pass due, it reads the
// Cluster again from the API server (the cache may not show a stamp just written) and, when that
// one still shows a pass due, what the pass protects and the object store configuration. The
// cache can only be behind, and a change to the Cluster wakes the reconciler again, so a Cluster
// the cache shows without a pass due costs no read of the API server.
//
// The Observation is of the Cluster read last; its Cluster is nil only when the cached read
// failed. Any later error fails the pass: the Observation is then due and the input nil.
func (r *Reconciler) gather(ctx context.Context, key types.NamespacedName) (Observation, *passInput, error) {
	var cached v1.Cluster
	if err := r.Client.Get(ctx, key, &cached); err != nil {
		return Observation{}, nil, err
	}
	last := r.lastCompleted(ctx, &cached)
	o := r.observe(&cached, last)
	if !Decide(o).Due {
		return o, nil, nil
	}
	var fresh v1.Cluster
	if err := r.APIReader.Get(ctx, key, &fresh); err != nil {
		return o, nil, fmt.Errorf("reading Cluster %s: %w", key.Name, err)
	}
	if o = r.observe(&fresh, last); !Decide(o).Due {
		return o, nil, nil
	}
	in, err := r.gatherPass(ctx, &fresh)
	return o, in, err
}

// lastCompleted is when the newest completed Backup of c completed, from the cache; zero when
// none did or the list failed (the hourly pass still runs).
func (r *Reconciler) lastCompleted(ctx context.Context, c *v1.Cluster) time.Time {
	var backups v1.BackupList
	if err := r.Client.List(ctx, &backups, client.InNamespace(c.Namespace)); err != nil {
		return time.Time{}
	}
	var last time.Time
	for _, b := range backups.Items {
		if b.Spec.Cluster.Name == c.Name && b.Status.Phase == v1.BackupPhaseCompleted && b.Status.CompletedAt != nil &&
			b.Status.CompletedAt.After(last) {
			last = b.Status.CompletedAt.Time
		}
	}
	return last
}

// observe is what Decide reads of c, now, its newest Backup having completed at last.
func (r *Reconciler) observe(c *v1.Cluster, last time.Time) Observation {
	p, err := retentionpolicy.PolicyFromSpec(c.Spec.Backup)
	return Observation{Now: r.Clock.Now(), Cluster: c, Policy: p, PolicyErr: err, LastCompleted: last}
}

// gatherPass reads, fresh from the API server, the Clusters and Backups of c's namespace (what
// the pass protects) and c's object store configuration with its credentials.
func (r *Reconciler) gatherPass(ctx context.Context, c *v1.Cluster) (*passInput, error) {
	var clusters v1.ClusterList
	// Every one of them, or nothing is deleted: one that does not decode may protect a backup.
	if err := r.APIReader.List(ctx, &clusters, client.InNamespace(c.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the Clusters of %s: %w", c.Namespace, err)
	}
	if err := clusters.Complete(); err != nil {
		return nil, fmt.Errorf("listing the Clusters of %s: %w", c.Namespace, err)
	}
	var backups v1.BackupList
	if err := r.APIReader.List(ctx, &backups, client.InNamespace(c.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the Backups of %s: %w", c.Namespace, err)
	}
	if err := backups.Complete(); err != nil {
		return nil, fmt.Errorf("listing the Backups of %s: %w", c.Namespace, err)
	}
	secrets, err := objectstore.ReadSecrets(ctx, r.APIReader, c.Namespace, c.Spec.Backup.ObjectStore)
	if err != nil {
		return nil, fmt.Errorf("object store credentials: %w", err)
	}
	cfg, err := objectstore.ResolveConfig(c.Spec.Backup.ObjectStore, secrets)
	if err != nil {
		return nil, fmt.Errorf("object store configuration: %w", err)
	}
	return &passInput{Clusters: clusters.Items, Backups: backups.Items, Config: cfg}, nil
}
