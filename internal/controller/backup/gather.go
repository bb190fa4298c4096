package backup

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// gather reads, once, what Decide needs for the Backup's phase.
func (r *Reconciler) gather(ctx context.Context, b *v1.Backup) (Observation, error) {
	o := Observation{Now: r.Clock.Now(), Backup: b, FirstLook: r.FirstLook}
	if b.IsDone() || b.DeletionTimestamp != nil || FirstLookWait(o.FirstLook, o.Now, b) > 0 {
		return o, nil
	}
	if b.Status.JobName == "" {
		return o, r.gatherWhere(ctx, &o)
	}
	if err := r.gatherJob(ctx, &o); err != nil {
		return o, err
	}
	switch {
	case b.Status.Phase == v1.BackupPhasePending && o.Job == nil:
		r.gatherJobInputs(ctx, &o)
	case b.Status.Phase == v1.BackupPhaseRunning && o.Job != nil && !o.JobForeign && kit.JobCondition(o.Job, batchv1.JobComplete):
		o.Metadata, o.MetadataErr = r.readMetadata(ctx, b)
	}
	return o, nil
}

// gatherWhere reads the Cluster, its object store and the instances the target is chosen from.
func (r *Reconciler) gatherWhere(ctx context.Context, o *Observation) error {
	c, err := r.getCluster(ctx, o.Backup)
	if c == nil {
		return err
	}
	o.Cluster = c
	// Fresh, under the Cluster's lock (Reconcile): a Backup that just started is seen.
	var all v1.BackupList
	if err := r.APIReader.List(ctx, &all, client.InNamespace(c.Namespace)); err != nil {
		return fmt.Errorf("listing the Backups of %s: %w", c.Namespace, err)
	}
	for _, other := range all.Items {
		if other.Spec.Cluster.Name == c.Name && other.Name != o.Backup.Name {
			o.Others = append(o.Others, other)
		}
	}
	if newer, behind := queuePosition(o.Backup, o.Others); newer != nil || behind != nil {
		return nil // it waits or is superseded: no instance is asked while the lock is held
	}
	if o.Store, o.StoreErr = r.resolveStore(ctx, c); o.StoreErr != nil {
		return nil
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(c.Namespace), client.MatchingLabels{v1.ClusterLabel: c.Name}); err != nil {
		return fmt.Errorf("listing the instances of %s: %w", c.Name, err)
	}
	var members []corev1.Pod
	for _, p := range pods.Items {
		if p.Labels[v1.InstanceLabel] != "" {
			members = append(members, p)
		}
	}
	reports, _ := r.Instances.InstanceStatuses(ctx, c, members)
	o.Candidates = make([]Candidate, 0, len(members))
	for _, p := range members {
		o.Candidates = append(o.Candidates, Candidate{Name: p.Name, Ready: instances.PodReady(&p), Report: reports[p.Name]})
	}
	return nil
}

// getCluster returns the Backup's Cluster, nil when it does not exist.
func (r *Reconciler) getCluster(ctx context.Context, b *v1.Backup) (*v1.Cluster, error) {
	var c v1.Cluster
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Cluster.Name}, &c)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Cluster %s: %w", b.Spec.Cluster.Name, err)
	}
	return &c, nil
}

// resolveStore reads the Cluster's object store configuration and Secrets.
func (r *Reconciler) resolveStore(ctx context.Context, c *v1.Cluster) (objectstore.Config, error) {
	if c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil {
		return objectstore.Config{}, errors.New("spec.backup.objectStore is not set")
	}
	secrets, err := objectstore.ReadSecrets(ctx, r.APIReader, c.Namespace, c.Spec.Backup.ObjectStore)
	if err != nil {
		return objectstore.Config{}, err
	}
	return objectstore.ResolveConfig(c.Spec.Backup.ObjectStore, secrets)
}

// readJob reads the Job named in the Backup's status, nil when it does not exist. The cache may
// not have seen a Job just created, so absence is confirmed with an uncached read before the
// Backup can be failed for it.
func (r *Reconciler) readJob(ctx context.Context, b *v1.Backup) (*batchv1.Job, error) {
	key := client.ObjectKey{Namespace: b.Namespace, Name: b.Status.JobName}
	job := &batchv1.Job{}
	err := r.Client.Get(ctx, key, job)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, job)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Job %s: %w", key.Name, err)
	}
	return job, nil
}

// gatherJob reads the Backup's Job and, once it finished, what its Pod said.
func (r *Reconciler) gatherJob(ctx context.Context, o *Observation) error {
	b := o.Backup
	job, err := r.readJob(ctx, b)
	if job == nil {
		return err
	}
	o.Job = job
	if !metav1.IsControlledBy(job, b) {
		o.JobForeign = true
		return nil
	}
	if kit.JobFinished(job) {
		o.PodMessage, err = kit.PodMessage(ctx, r.APIReader, job)
	}
	return err
}

// gatherJobInputs reads the Cluster the Job of a pending Backup is built from; a failed read is
// recorded, for Decide to retry once it has checked the timeout.
func (r *Reconciler) gatherJobInputs(ctx context.Context, o *Observation) {
	c, err := r.getCluster(ctx, o.Backup)
	switch {
	case err != nil:
		o.ClusterErr = err
		return
	case c == nil:
		o.ClusterErr = fmt.Errorf("Cluster %s not found", o.Backup.Spec.Cluster.Name)
		return
	}
	o.Cluster = c
	o.OperatorImage = r.OperatorImage
	if o.OperatorImage == "" {
		o.OperatorImage = specs.DefaultOperatorImage
	}
}

// readMetadata reads the backup's metadata.json where the Backup recorded it went.
func (r *Reconciler) readMetadata(ctx context.Context, b *v1.Backup) (*objectstore.Metadata, error) {
	var c v1.Cluster
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Cluster.Name}, &c); err != nil {
		return nil, fmt.Errorf("reading Cluster %s for its object store: %w", b.Spec.Cluster.Name, err)
	}
	cfg, err := r.resolveStore(ctx, &c)
	if err != nil {
		return nil, fmt.Errorf("object store: %w", err)
	}
	prefix, ref, err := objectstore.ParseBackupDir(b.Status.DestinationPath)
	if err != nil {
		return nil, err
	}
	if cfg.EndpointURL() != b.Status.Endpoint || cfg.Bucket != b.Status.Bucket {
		return nil, fmt.Errorf("the Cluster's object store moved from %s/%s to %s/%s since the backup started",
			b.Status.Endpoint, b.Status.Bucket, cfg.EndpointURL(), cfg.Bucket)
	}
	cfg.Path = prefix
	store, err := r.openStore(cfg)
	if err != nil {
		return nil, err
	}
	return store.ReadMetadata(ctx, ref)
}
