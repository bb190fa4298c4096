package backup

import (
	"context"
	"errors"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// gatherFinalizer reads what decideFinalizer needs: the Cluster for its default policy, or, for a
// Backup being deleted with the finalizer, its Cluster and the referencing Clusters (from the API
// server, not the cache), the running Job and the store.
func (r *Reconciler) gatherFinalizer(ctx context.Context, b *v1.Backup) (*finalizerObservation, error) {
	o := &finalizerObservation{Now: r.Clock.Now(), Backup: b}
	if b.DeletionTimestamp == nil {
		if b.Spec.DeletionPolicy != "" {
			return o, nil
		}
		var err error
		o.Cluster, err = r.getCluster(ctx, b)
		return o, err
	}
	if !controllerutil.ContainsFinalizer(b, v1.RemoteCleanupFinalizer) || b.Spec.DeletionPolicy == v1.DeletionPolicyKeep ||
		b.Annotations[v1.RemoteCleanupBypassAnnotation] == "true" {
		return o, nil // nothing to read: decideCleanup removes the finalizer without deleting
	}
	var clusters v1.ClusterList
	if err := r.APIReader.List(ctx, &clusters, client.InNamespace(b.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the Clusters of %s: %w", b.Namespace, err)
	}
	// One that does not decode may restore from this Backup, or be its Cluster with a Keep
	// default: nothing is deleted until every Cluster reads.
	if err := clusters.Complete(); err != nil {
		return nil, fmt.Errorf("listing the Clusters of %s: %w", b.Namespace, err)
	}
	for i, c := range clusters.Items {
		if recoveryBackup(&c) == b.Name && c.DeletionTimestamp == nil {
			o.ReferencedBy = append(o.ReferencedBy, c.Name)
		}
		if c.Name == b.Spec.Cluster.Name && b.Spec.DeletionPolicy == "" {
			o.Cluster = &clusters.Items[i]
		}
	}
	sort.Strings(o.ReferencedBy)
	if !b.IsDone() && b.Status.JobName != "" {
		if err := r.gatherOwnJob(ctx, o); err != nil {
			return nil, err
		}
	}
	if b.Status.DestinationPath != "" {
		var err error
		o.Store, err = r.cleanupStore(ctx, b)
		if errors.Is(err, errStoreUnresolved) {
			o.StoreErr, err = err, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return o, nil
}

// gatherOwnJob reads the Job of a Backup deleted before it finished, confirming absence with an
// uncached read; a Job of that name that is not this Backup's is ignored.
func (r *Reconciler) gatherOwnJob(ctx context.Context, o *finalizerObservation) error {
	job, err := r.readJob(ctx, o.Backup)
	if job != nil && metav1.IsControlledBy(job, o.Backup) {
		o.Job = job
	}
	return err
}

// cleanupStore resolves the store holding the Backup's recorded directory: from the
// configuration recorded in its status, else (Backups recorded before that field existed) from
// its Cluster's current configuration when it still points at the recorded endpoint and bucket.
// Errors wrapping errStoreUnresolved need a user; others are transient.
func (r *Reconciler) cleanupStore(ctx context.Context, b *v1.Backup) (objectstore.Config, error) {
	prefix, _, err := objectstore.ParseBackupDir(b.Status.DestinationPath)
	if err != nil {
		return objectstore.Config{}, fmt.Errorf("%w: status.destinationPath: %w", errStoreUnresolved, err)
	}
	spec := b.Status.ObjectStore
	if spec == nil {
		c, err := r.getCluster(ctx, b)
		if err != nil {
			return objectstore.Config{}, err
		}
		if c == nil || c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil {
			return objectstore.Config{}, fmt.Errorf("%w: the Backup recorded no object store configuration and Cluster %s has none",
				errStoreUnresolved, b.Spec.Cluster.Name)
		}
		spec = c.Spec.Backup.ObjectStore
	}
	secrets, err := objectstore.ReadSecrets(ctx, r.APIReader, b.Namespace, spec)
	if err != nil {
		if apierrors.IsNotFound(err) || errors.Is(err, objectstore.ErrInvalid) {
			return objectstore.Config{}, fmt.Errorf("%w: credentials: %w", errStoreUnresolved, err)
		}
		return objectstore.Config{}, fmt.Errorf("reading the object store credentials: %w", err)
	}
	cfg, err := objectstore.ResolveConfig(spec, secrets)
	if err != nil {
		return objectstore.Config{}, fmt.Errorf("%w: %w", errStoreUnresolved, err)
	}
	if cfg.EndpointURL() != b.Status.Endpoint || cfg.Bucket != b.Status.Bucket {
		return objectstore.Config{}, fmt.Errorf("%w: the backup was written to %s/%s but the object store configuration now says %s/%s",
			errStoreUnresolved, b.Status.Endpoint, b.Status.Bucket, cfg.EndpointURL(), cfg.Bucket)
	}
	cfg.Path, cfg.MaxRetries = prefix, cleanupMaxRetries
	return cfg, nil
}
