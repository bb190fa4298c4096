package controller

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// gatherBackup reads what decideBackup needs for the Backup's phase.
func (r *BackupReconciler) gatherBackup(ctx context.Context, b *v1.Backup) (*backupObservation, error) {
	o := &backupObservation{Now: r.Clock.Now(), Backup: b}
	if b.IsDone() || b.DeletionTimestamp != nil {
		return o, nil
	}
	if b.Status.JobName == "" {
		return o, r.gatherWhere(ctx, o)
	}
	if err := r.gatherJob(ctx, o); err != nil {
		return nil, err
	}
	if b.Status.Phase == v1.BackupPhaseRunning && o.Job != nil && !o.JobForeign && jobCondition(o.Job, batchv1.JobComplete) {
		o.Metadata, o.MetadataErr = r.readMetadata(ctx, b)
	}
	return o, nil
}

// gatherWhere resolves the Cluster, its object store and the target instance.
func (r *BackupReconciler) gatherWhere(ctx context.Context, o *backupObservation) error {
	b := o.Backup
	var c v1.Cluster
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Cluster.Name}, &c); err != nil {
		if apierrors.IsNotFound(err) {
			o.ClusterMissing = true
			return nil
		}
		return fmt.Errorf("reading Cluster %s: %w", b.Spec.Cluster.Name, err)
	}
	o.Store, o.StoreErr = r.resolveStore(ctx, &c)
	if o.StoreErr == nil {
		o.StoreSpec = c.Spec.Backup.ObjectStore
	}
	if o.StoreErr != nil {
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
	reports, _ := r.Instances.InstanceStatuses(ctx, &c, members)
	cands := make([]backupCandidate, 0, len(members))
	for _, p := range members {
		cands = append(cands, backupCandidate{Name: p.Name, Ready: instances.PodReady(&p), Report: reports[p.Name]})
	}
	excluded := map[string]bool{}
	for _, n := range append(append([]string{}, c.Status.FencedInstances...), c.Status.DivergedInstances...) {
		excluded[n] = true
	}
	o.Target, o.Why = chooseBackupTarget(b.Spec.Target, c.Status.CurrentPrimary, excluded, cands)
	return nil
}

// resolveStore reads the Cluster's object store configuration and Secrets.
func (r *BackupReconciler) resolveStore(ctx context.Context, c *v1.Cluster) (objectstore.Config, error) {
	if c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil {
		return objectstore.Config{}, errors.New("spec.backup.objectStore is not set")
	}
	secrets, err := objectstore.ReadSecrets(ctx, r.APIReader, c.Namespace, c.Spec.Backup.ObjectStore)
	if err != nil {
		return objectstore.Config{}, err
	}
	return objectstore.ResolveConfig(c.Spec.Backup.ObjectStore, secrets)
}

// gatherJob reads the Backup's Job. The cache may not have seen a Job just created, so absence
// is confirmed with an uncached read before the Backup can be failed for it.
func (r *BackupReconciler) gatherJob(ctx context.Context, o *backupObservation) error {
	b := o.Backup
	key := client.ObjectKey{Namespace: b.Namespace, Name: b.Status.JobName}
	job := &batchv1.Job{}
	err := r.Client.Get(ctx, key, job)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, job)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Job %s: %w", key.Name, err)
	}
	o.Job = job
	if !ownedBy(job, b) {
		o.JobForeign = true
		return nil
	}
	if jobCondition(job, batchv1.JobComplete) || jobCondition(job, batchv1.JobFailed) {
		o.PodMessage, err = r.podMessage(ctx, job)
	}
	return err
}

func ownedBy(job *batchv1.Job, b *v1.Backup) bool {
	for _, ref := range job.OwnerReferences {
		if ref.UID == b.UID && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return false
}

// podMessage returns the termination message of the Job's backup container, "" if none.
func (r *BackupReconciler) podMessage(ctx context.Context, job *batchv1.Job) (string, error) {
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(job.Namespace),
		client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err != nil {
		return "", fmt.Errorf("listing the Pods of Job %s: %w", job.Name, err)
	}
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.Message != "" && metav1IsOwnedByJob(&p, job) {
				return t.Message, nil
			}
		}
	}
	return "", nil
}

func metav1IsOwnedByJob(p *corev1.Pod, job *batchv1.Job) bool {
	for _, ref := range p.OwnerReferences {
		if ref.UID == job.UID {
			return true
		}
	}
	return false
}

// readMetadata reads the backup's metadata.json where the Backup recorded it went.
func (r *BackupReconciler) readMetadata(ctx context.Context, b *v1.Backup) (*objectstore.Metadata, error) {
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
