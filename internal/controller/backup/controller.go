package backup

import (
	"context"
	"os"
	"time"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// Reconciler runs each Backup once: it resolves the Cluster and its object store, chooses the
// instance, creates a Job owned by the Backup running `manager backup`, follows it, and ends the
// Backup completed (the Job succeeded and the controller read its metadata.json) or failed (with
// a reason and a Warning Event). A completed or failed Backup is never acted on again, so its Job
// is never recreated, whatever happened to it.
//
// With deletionPolicy delete (its own, else its Cluster's spec.backup.deletionPolicy) the Backup
// carries RemoteCleanupFinalizer, and deleting it deletes its recorded object-store directory
// first (finalizer*.go).
//
// The Job reports through its Pod's termination message (a backupjob.Result); the controller
// trusts only metadata.json in the object store for completion, and cross-checks the checksum
// the Job reported against it. No credentials reach the Job other than mounted Secret files; the
// Job has no service account token.
type Reconciler struct {
	Client    client.Client
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// Instances asks instance managers for their status, to choose the target.
	Instances instances.StatusSource
	// OpenStore opens the object store to read metadata.json and to delete a deleted Backup's
	// directory; objectstore.New when nil. The operator sets operator.OpenObjectStore, whose
	// clients refuse loopback and link-local addresses.
	OpenStore func(objectstore.Config) (objectstore.Store, error)
	// OperatorImage is the image of the init container that copies the manager binary;
	// specs.DefaultOperatorImage when empty.
	OperatorImage string
	// MaxConcurrentReconciles defaults to DefaultWorkers.
	MaxConcurrentReconciles int
	// FirstLook delays the first step of a Backup a ScheduledBackup created until that long
	// after its creation (FirstLookWait); zero acts at once. NewReconciler sets
	// ScheduledFirstLook.
	FirstLook time.Duration

	// queue serialises the start of each Cluster's Backups (queue.go).
	queue clusterLocks
}

// DefaultWorkers is how many Backups are reconciled in parallel unless configured: the Backups
// of many schedules sharing a slot arrive together, and each reconcile mostly waits on the API
// server.
const DefaultWorkers = 50

// NewReconciler returns the production reconciler for mgr, with the operator image from
// specs.OperatorImageEnv and a scheduled Backup's first step ScheduledFirstLook after its
// creation.
func NewReconciler(mgr ctrl.Manager, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("backup-controller"), Clock: clk,
		Instances: instances.MTLS{Reader: mgr.GetAPIReader()}, OperatorImage: os.Getenv(specs.OperatorImageEnv),
		FirstLook: ScheduledFirstLook}
}

// Reconcile runs the remote-cleanup finalizer (which ends here for a Backup being deleted), then
// gathers, decides and acts on the Backup's phase.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var b v1.Backup
	if err := r.Client.Get(ctx, req.NamespacedName, &b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.export(ctx, &b)
	if res, done, err := r.reconcileFinalizer(ctx, &b); done {
		return res, err
	}
	if b.Status.JobName == "" && !b.IsDone() && b.DeletionTimestamp == nil {
		// Deciding whether it starts: one Backup of the Cluster at a time (queue.go).
		unlock, ok := r.queue.tryLock(b.Namespace + "/" + b.Spec.Cluster.Name)
		if !ok {
			return ctrl.Result{RequeueAfter: lockBusyRetry}, nil
		}
		defer unlock()
	}
	o, err := r.gather(ctx, &b)
	if err != nil {
		return ctrl.Result{}, err
	}
	d := Decide(o)
	if err := r.act(ctx, o, d); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// openStore opens an object store with OpenStore, or objectstore.New when it is nil.
func (r *Reconciler) openStore(cfg objectstore.Config) (objectstore.Store, error) {
	if r.OpenStore != nil {
		return r.OpenStore(cfg)
	}
	return objectstore.New(cfg)
}
