package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

const (
	// cleanupTimeout bounds one attempt to delete a backup directory, so a hung object store
	// never holds a worker.
	cleanupTimeout = 2 * time.Minute
	// cleanupMaxRetries is how many times the object store client tries one request during a
	// cleanup; the finalizer's own backoff does the rest.
	cleanupMaxRetries = 2
)

// errStoreUnresolved marks a store the cleanup cannot reach until a user acts.
var errStoreUnresolved = errors.New("object store unresolved")

// reconcileFinalizer runs the remote-cleanup finalizer's gather, decide and act. done says the
// reconcile ends here: the Backup is being deleted, or the finalizer step failed.
func (r *BackupReconciler) reconcileFinalizer(ctx context.Context, b *v1.Backup) (ctrl.Result, bool, error) {
	cleaning := b.DeletionTimestamp != nil && controllerutil.ContainsFinalizer(b, v1.RemoteCleanupFinalizer)
	if cleaning {
		// The cleanup deletes a recovery point: it decides on the Backup as the API server has
		// it, not as the cache does (a keep or the bypass annotation written since).
		fresh := &v1.Backup{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(b), fresh); err != nil {
			if apierrors.IsNotFound(err) {
				return ctrl.Result{}, true, nil
			}
			return r.cleanupReadFailed(ctx, b, fmt.Errorf("reading Backup %s: %w", b.Name, err))
		}
		*b = *fresh
	}
	o, err := r.gatherFinalizer(ctx, b)
	if err != nil && cleaning {
		return r.cleanupReadFailed(ctx, b, err)
	}
	if err != nil {
		return ctrl.Result{}, true, err
	}
	d := decideFinalizer(*o)
	if d.Action == finCleanup {
		d = decideCleanupResult(*o, r.deleteRemote(ctx, o, d.Ref))
	}
	res, err := r.actFinalizer(ctx, o, d)
	return res, b.DeletionTimestamp != nil || err != nil, err
}

// cleanupReadFailed surfaces a cleanup that could not read what it decides on (the API server
// failed or refused a read; a missing RBAC permission does not go away by itself) in the
// RemoteCleanup condition and a Warning, and retries with the cleanup's backoff, so that the
// Warning comes once per attempt. Nothing is deleted.
func (r *BackupReconciler) cleanupReadFailed(ctx context.Context, b *v1.Backup, err error) (ctrl.Result, bool, error) {
	o := &finalizerObservation{Now: r.Clock.Now(), Backup: b}
	res, aerr := r.actFinalizer(ctx, o, decideCleanupReadFailed(*o, err))
	if aerr != nil {
		return ctrl.Result{}, true, errors.Join(err, aerr)
	}
	return res, true, nil
}

// gatherFinalizer reads what decideFinalizer needs: the Cluster for its default policy, or, for a
// Backup being deleted with the finalizer, its Cluster and the referencing Clusters (from the API
// server, not the cache), the running Job and the store.
func (r *BackupReconciler) gatherFinalizer(ctx context.Context, b *v1.Backup) (*finalizerObservation, error) {
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

// getCluster returns the Backup's Cluster, nil when it does not exist.
func (r *BackupReconciler) getCluster(ctx context.Context, b *v1.Backup) (*v1.Cluster, error) {
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

// gatherOwnJob reads the Job of a Backup deleted before it finished, confirming absence with an
// uncached read; a Job of that name that is not this Backup's is ignored.
func (r *BackupReconciler) gatherOwnJob(ctx context.Context, o *finalizerObservation) error {
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
	if ownedBy(job, b) {
		o.Job = job
	}
	return nil
}

// cleanupStore resolves the store holding the Backup's recorded directory: from the
// configuration recorded in its status, else (Backups recorded before that field existed) from
// its Cluster's current configuration when it still points at the recorded endpoint and bucket.
// Errors wrapping errStoreUnresolved need a user; others are transient.
func (r *BackupReconciler) cleanupStore(ctx context.Context, b *v1.Backup) (objectstore.Config, error) {
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

// errForeignBackup marks a directory whose metadata.json names another namespace.
var errForeignBackup = errors.New("the backup directory belongs to a Cluster of another namespace")

// deleteRemote deletes the backup directory ref: metadata.json first, then the archive and
// anything else under it, then its open multipart uploads. A directory whose metadata.json names
// another namespace than the Backup's was written by a Cluster of the same name there sharing
// the location: it is refused (errForeignBackup), untouched.
func (r *BackupReconciler) deleteRemote(ctx context.Context, o *finalizerObservation, ref objectstore.BackupRef) error {
	store, err := r.openStore(o.Store)
	if err != nil {
		return fmt.Errorf("opening the object store: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	md, err := store.ReadMetadata(ctx, ref)
	switch {
	case err == nil && !md.BelongsTo(o.Backup.Namespace):
		return fmt.Errorf("%w: its metadata.json names namespace %s", errForeignBackup, md.Namespace)
	case err != nil && !errors.Is(err, objectstore.ErrNotFound) && !errors.Is(err, objectstore.ErrInvalid):
		return fmt.Errorf("reading metadata.json before deleting: %w", err)
	}
	return store.DeleteBackup(ctx, ref)
}

// actFinalizer performs the decision: finalizer patches, the Job deletion, the RemoteCleanup
// condition and the Events.
func (r *BackupReconciler) actFinalizer(ctx context.Context, o *finalizerObservation, d finalizerDecision) (ctrl.Result, error) {
	b := o.Backup
	logger := log.FromContext(ctx).WithValues("backup", b.Name)
	switch d.Action {
	case finNothing:
		return ctrl.Result{}, nil
	case finAdd:
		if err := r.patchFinalizer(ctx, b, true); err != nil {
			return ctrl.Result{}, err
		}
	case finDeleteJob:
		fg := client.PropagationPolicy("Foreground")
		if err := r.Client.Delete(ctx, o.Job, fg); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting Job %s of the deleted Backup: %w", o.Job.Name, err)
		}
		fallthrough
	case finWait:
		if err := r.writeCleanupCondition(ctx, b, d); err != nil {
			return ctrl.Result{}, err
		}
	case finRemove:
		if err := r.writeCleanupCondition(ctx, b, d); err != nil {
			logger.Info("could not record the cleanup before removing the finalizer", "error", err.Error())
		}
		if err := r.patchFinalizer(ctx, b, false); err != nil {
			return ctrl.Result{}, err
		}
	}
	logger.Info("remote cleanup", "action", d.Action.String(), "deleting", b.DeletionTimestamp != nil,
		"condition", conditionReason(d), "requeueAfter", d.RequeueAfter)
	emit(r.Recorder, b, d.Events)
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// patchFinalizer adds or removes the finalizer under an optimistic lock; b is updated in place.
func (r *BackupReconciler) patchFinalizer(ctx context.Context, b *v1.Backup, add bool) error {
	old := b.DeepCopy()
	if add {
		controllerutil.AddFinalizer(b, v1.RemoteCleanupFinalizer)
	} else {
		controllerutil.RemoveFinalizer(b, v1.RemoteCleanupFinalizer)
	}
	err := patchSpec(ctx, r.Client, b, old)
	if !add && apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// writeCleanupCondition sets the RemoteCleanup condition unless it already says the same; b is
// updated in place.
func (r *BackupReconciler) writeCleanupCondition(ctx context.Context, b *v1.Backup, d finalizerDecision) error {
	if d.Condition == nil {
		return nil
	}
	cur := meta.FindStatusCondition(b.Status.Conditions, v1.BackupRemoteCleanup)
	if cur != nil && cur.Status == d.Condition.Status && cur.Reason == d.Condition.Reason && cur.Message == d.Condition.Message {
		return nil
	}
	old := b.DeepCopy()
	meta.SetStatusCondition(&b.Status.Conditions, *d.Condition)
	if err := patchStatus(ctx, r.Client, b, old); err != nil {
		*b = *old
		return err
	}
	return nil
}

func conditionReason(d finalizerDecision) string {
	if d.Condition == nil {
		return ""
	}
	return d.Condition.Reason
}

// recoveryBackup is the Backup a Cluster bootstraps from, "" when none.
func recoveryBackup(c *v1.Cluster) string {
	if c.Spec.Bootstrap == nil || c.Spec.Bootstrap.Recovery == nil {
		return ""
	}
	return c.Spec.Bootstrap.Recovery.Backup.Name
}

// skipCleanupConditionWrites drops the Backup updates that only rewrite the RemoteCleanup
// condition: the cleanup's backoff decides when it runs again, not its own status write.
func skipCleanupConditionWrites() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*v1.Backup)
		cur, ok2 := e.ObjectNew.(*v1.Backup)
		return !ok1 || !ok2 || !equalButCleanupCondition(old, cur)
	}}
}

// equalButCleanupCondition reports whether a and b differ at most in their RemoteCleanup
// condition and their resource version.
func equalButCleanupCondition(a, b *v1.Backup) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	for _, x := range []*v1.Backup{a, b} {
		meta.RemoveStatusCondition(&x.Status.Conditions, v1.BackupRemoteCleanup)
		x.ResourceVersion, x.ManagedFields = "", nil
	}
	return equality.Semantic.DeepEqual(a, b)
}
