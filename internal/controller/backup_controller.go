package controller

import (
	"context"
	"fmt"
	"os"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// BackupReconciler runs each Backup once: it resolves the Cluster and its object store, chooses
// the instance, creates a Job owned by the Backup running `manager backup`, follows it, and ends
// the Backup completed (the Job succeeded and the controller read its metadata.json) or failed
// (with a reason and a Warning Event). A completed or failed Backup is never acted on again, so
// its Job is never recreated, whatever happened to it.
//
// With deletionPolicy delete (its own, else its Cluster's spec.backup.deletionPolicy) the Backup
// carries RemoteCleanupFinalizer, and deleting it deletes its recorded object-store directory
// first (backup_finalizer*.go).
//
// The Job reports through its Pod's termination message (a small JSON); the controller trusts
// only metadata.json in the object store for completion, and cross-checks the checksum the Job
// reported against it. No credentials reach the Job other than mounted Secret files; the Job has
// no service account token.
type BackupReconciler struct {
	Client    client.Client
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// Instances asks instance managers for their status, to choose the target.
	Instances instances.StatusSource
	// OpenStore opens the object store to read metadata.json and to delete a deleted Backup's
	// directory; objectstore.New when nil.
	OpenStore func(objectstore.Config) (objectstore.Store, error)
	// OperatorImage is the image of the init container that copies the manager binary.
	OperatorImage string
	// MaxConcurrentReconciles defaults to DefaultBackupWorkers.
	MaxConcurrentReconciles int
}

// DefaultBackupWorkers is how many Backups are reconciled in parallel unless configured: the
// Backups of many schedules sharing a slot arrive together, and each reconcile mostly waits on the
// API server.
const DefaultBackupWorkers = 50

// NewBackupReconciler returns the production reconciler for mgr; the operator image comes from
// the same environment variable as the Cluster reconciler's.
func NewBackupReconciler(mgr ctrl.Manager, clk clock.PassiveClock) *BackupReconciler {
	return &BackupReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("backup-controller"), Clock: clk,
		Instances: instances.MTLS{Reader: mgr.GetAPIReader()}, OperatorImage: os.Getenv(OperatorImageEnv)}
}

// backupClusterIndex indexes cached Backups by spec.cluster.name.
const backupClusterIndex = "spec.cluster.name"

// SetupWithManager registers the reconciler; a Backup is reconciled when it or its Job changes,
// when the spec of a Cluster it belongs to or that bootstraps from it changes or the Cluster goes
// (the default deletion policy and a refused cleanup depend on them).
func (r *BackupReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1.Backup{}, backupClusterIndex,
		func(o client.Object) []string { return []string{o.(*v1.Backup).Spec.Cluster.Name} }); err != nil {
		return fmt.Errorf("indexing Backups by Cluster: %w", err)
	}
	workers := r.MaxConcurrentReconciles
	if workers == 0 {
		workers = DefaultBackupWorkers
	}
	b := ctrl.NewControllerManagedBy(mgr).For(&v1.Backup{}, builder.WithPredicates(skipCleanupConditionWrites())).
		Owns(&batchv1.Job{}).
		Watches(&v1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToBackups),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers})
	return b.Named("backup").Complete(r)
}

// clusterToBackups maps a Cluster to its Backups and to the Backup its bootstrap.recovery names.
func (r *BackupReconciler) clusterToBackups(ctx context.Context, o client.Object) []reconcile.Request {
	c, ok := o.(*v1.Cluster)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	if name := recoveryBackup(c); name != "" {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: c.Namespace, Name: name}})
	}
	var list v1.BackupList
	if err := r.Client.List(ctx, &list, client.InNamespace(c.Namespace), client.MatchingFields{backupClusterIndex: c.Name}); err != nil {
		log.FromContext(ctx).Error(err, "listing the Backups of a Cluster", "cluster", c.Name)
		return reqs
	}
	for _, b := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&b)})
	}
	return reqs
}

// Reconcile gathers, decides and acts.
func (r *BackupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var b v1.Backup
	if err := r.Client.Get(ctx, req.NamespacedName, &b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if res, done, err := r.reconcileFinalizer(ctx, &b); done {
		return res, err
	}
	o, err := r.gatherBackup(ctx, &b)
	if err != nil {
		return ctrl.Result{}, err
	}
	d := decideBackup(*o)
	if err := r.actBackup(ctx, o, d); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: d.RequeueAft}, nil
}

// openStore opens an object store with OpenStore, or objectstore.New when it is nil.
func (r *BackupReconciler) openStore(cfg objectstore.Config) (objectstore.Store, error) {
	if r.OpenStore != nil {
		return r.OpenStore(cfg)
	}
	return objectstore.New(cfg)
}

// actBackup performs the decision: the Job first (creation or deletion), then the status patch
// under an optimistic lock, then the Events.
func (r *BackupReconciler) actBackup(ctx context.Context, o *backupObservation, d backupDecision) error {
	b := o.Backup
	logger := log.FromContext(ctx).WithValues("backup", b.Name)
	if d.Action == backupNothing && !d.DeleteJob {
		return nil
	}
	if d.Action == backupCreateJob {
		if err := r.createJob(ctx, b); err != nil {
			return err
		}
		logger.Info("created backup job", "job", b.Status.JobName, "instance", b.Status.InstanceName)
	}
	if d.DeleteJob && o.Job != nil && !o.JobForeign {
		bg := client.PropagationPolicy("Background")
		if err := r.Client.Delete(ctx, o.Job, bg); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Job %s: %w", o.Job.Name, err)
		}
	}
	updated := b.DeepCopy()
	updated.Status = d.Status
	if err := patchStatus(ctx, r.Client, updated, b); err != nil {
		return err
	}
	logger.Info("backup status", "phase", d.Status.Phase, "error", d.Status.Error)
	emit(r.Recorder, updated, d.Events)
	return nil
}

// createJob creates the Backup's Job; one that already exists and is this Backup's is fine.
func (r *BackupReconciler) createJob(ctx context.Context, b *v1.Backup) error {
	var c v1.Cluster
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Cluster.Name}, &c); err != nil {
		return fmt.Errorf("reading Cluster %s: %w", b.Spec.Cluster.Name, err)
	}
	if c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil {
		return fmt.Errorf("Cluster %s lost its object store before the Job was created", c.Name)
	}
	image := r.OperatorImage
	if image == "" {
		image = DefaultOperatorImage
	}
	job := specs.BuildBackupJob(b, &c, specs.BackupJobParams{OperatorImage: image,
		BackupID: b.Status.BackupID, Instance: b.Status.InstanceName})
	if err := r.Client.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Job %s: %w", job.Name, err)
	}
	return nil
}
