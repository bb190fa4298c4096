package protection

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// Reconciler keeps status.backups and the BackupsHealthy condition of each Cluster.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads the object store Secrets from the API server.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// OpenStore opens an object store; objectstore.New when nil.
	OpenStore func(objectstore.Config) (*objectstore.Client, error)

	// listings are the last listing of each Cluster's location, by namespace/name, failed ones
	// included: a status write that conflicts, or a store that fails, does not list again at once.
	listings sync.Map
}

// NewReconciler returns the production reconciler for mgr.
func NewReconciler(mgr ctrl.Manager, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("protection-controller"), Clock: clk}
}

// SetupWithManager registers the reconciler under the name "protection": a Cluster is looked at
// when it changes, when one of its Backups or ScheduledBackups changes, every 5 minutes, and when
// its critical level falls due.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named("protection").
		For(&v1.Cluster{}, builder.WithPredicates(clusterChanged())).
		Watches(&v1.Backup{}, kit.ToCluster(kit.ClusterOf)).
		Watches(&v1.ScheduledBackup{}, kit.ToCluster(kit.ClusterOf)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("building the protection controller: %w", err)
	}
	return nil
}

// clusterChanged passes creations, spec changes and the status fields the protection reads: the
// location claim, the archive's window and the first instance; not every status write.
func clusterChanged() predicate.Funcs {
	return kit.ClusterChanges(func(o, n *v1.Cluster) bool {
		return o.Generation != n.Generation || o.Status.LatestGeneratedNode != n.Status.LatestGeneratedNode ||
			!equality.Semantic.DeepEqual(o.Status.ObjectStoreLocation, n.Status.ObjectStoreLocation) ||
			!equality.Semantic.DeepEqual(recoverableFrom(o), recoverableFrom(n))
	}, true)
}

func recoverableFrom(c *v1.Cluster) *metav1.MicroTime {
	if c.Status.BinlogArchive == nil {
		return nil
	}
	return c.Status.BinlogArchive.RecoverableFrom
}

// Reconcile gathers the Cluster's Backups, schedules and location, decides and records.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var c v1.Cluster
	if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
		if apierrors.IsNotFound(err) {
			export(req.Namespace, req.Name, nil, nil)
			r.listings.Delete(req.String())
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if c.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	if kit.AwaitsFirstStatus(&c) {
		return ctrl.Result{RequeueAfter: kit.FirstStatusWait}, nil
	}
	o, err := r.gather(ctx, &c)
	if err != nil {
		return ctrl.Result{}, err
	}
	d := Decide(o)
	if err := r.record(ctx, &c, d); err != nil {
		return kit.ConflictOr(err)
	}
	export(c.Namespace, c.Name, d.Status, d.Condition)
	if o.Listing.Err != nil && !o.Listing.At.IsZero() {
		d.RequeueAfter = min(d.RequeueAfter, retryListing) // a listing that failed is tried again
	}
	if err := r.prune(ctx, d.Prune); err != nil {
		return ctrl.Result{}, err
	}
	kit.Emit(r.Recorder, &c, d.Events)
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// gather reads the Cluster's Backups and ScheduledBackups from the cache and lists its location
// when the Cluster holds it and the last listing is older than refreshEvery.
func (r *Reconciler) gather(ctx context.Context, c *v1.Cluster) (Observation, error) {
	o := Observation{Now: r.Clock.Now(), Cluster: c}
	var backups v1.BackupList
	if err := r.Client.List(ctx, &backups, client.InNamespace(c.Namespace)); err != nil {
		return o, fmt.Errorf("listing the Backups of %s: %w", c.Namespace, err)
	}
	for _, b := range backups.Items {
		// A Backup created before the Cluster is an earlier incarnation's, of the same name.
		if b.Spec.Cluster.Name == c.Name && !b.CreationTimestamp.Before(&c.CreationTimestamp) {
			o.Backups = append(o.Backups, b)
		}
	}
	var schedules v1.ScheduledBackupList
	if err := r.Client.List(ctx, &schedules, client.InNamespace(c.Namespace)); err != nil {
		return o, fmt.Errorf("listing the ScheduledBackups of %s: %w", c.Namespace, err)
	}
	for _, s := range schedules.Items {
		if s.Spec.Cluster.Name == c.Name {
			o.Schedules = append(o.Schedules, s)
		}
	}
	var clusters v1.ClusterList
	if err := r.Client.List(ctx, &clusters, client.InNamespace(c.Namespace)); err != nil {
		return o, fmt.Errorf("listing the Clusters of %s: %w", c.Namespace, err)
	}
	o.RecoveringFrom = recoverySources(clusters.Items)
	o.Listing = r.list(ctx, c, o)
	return o, nil
}

// list counts the complete backups in the Cluster's location; Err says why it did not.
func (r *Reconciler) list(ctx context.Context, c *v1.Cluster, o Observation) Listing {
	if c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil || !c.HoldsObjectStoreLocation() {
		return Listing{Err: fmt.Errorf("the Cluster does not hold its object store location")}
	}
	key := c.Namespace + "/" + c.Name
	if v, ok := r.listings.Load(key); ok {
		last := v.(Listing)
		wait := refreshEvery
		if last.Err != nil {
			wait = retryListing
		}
		if o.Now.Sub(last.At) < wait && !newBackupSince(o.Backups, last.At) {
			return last // recent enough: a status write retried after a conflict does not list again
		}
	}
	l := r.listStore(ctx, c, o.Now)
	r.listings.Store(key, l)
	return l
}

// retryListing is how soon a location that could not be listed is listed again.
const retryListing = time.Minute

// listStore lists the location's complete backups.
func (r *Reconciler) listStore(ctx context.Context, c *v1.Cluster, now time.Time) Listing {
	store, err := objectstore.OpenSpec(ctx, r.APIReader, c.Namespace, c.Spec.Backup.ObjectStore, r.OpenStore)
	if err != nil {
		return Listing{At: now, Err: err}
	}
	entries, err := store.ListBackups(ctx, c.ObjectStoreDirName())
	if err != nil {
		return Listing{At: now, Err: err}
	}
	l := Listing{At: now}
	for _, e := range entries {
		if e.Complete {
			l.Complete++
			l.Bytes += e.Size
		}
	}
	return l
}

// newBackupSince reports whether a Backup finished after t: the listing is out of date.
func newBackupSince(backups []v1.Backup, t time.Time) bool {
	for _, b := range backups {
		if b.IsDone() && b.Status.CompletedAt != nil && !b.Status.CompletedAt.Time.Before(t.Truncate(time.Second)) {
			return true
		}
	}
	return false
}

// prune deletes the Backup objects finishedBackupTTL expired, each only at the version read: one
// that changed meanwhile is decided on again.
func (r *Reconciler) prune(ctx context.Context, backups []v1.Backup) error {
	for i := range backups {
		b := &backups[i]
		uid, rv := b.UID, b.ResourceVersion
		err := r.Client.Delete(ctx, b, client.Preconditions{UID: &uid, ResourceVersion: &rv})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting the expired Backup %s: %w", b.Name, err)
		}
	}
	return nil
}

// record patches status.backups and the condition when they changed.
func (r *Reconciler) record(ctx context.Context, c *v1.Cluster, d Decision) error {
	old := c.DeepCopy()
	c.Status.Backups = d.Status
	if d.Condition == nil {
		meta.RemoveStatusCondition(&c.Status.Conditions, v1.ConditionBackupsHealthy)
	} else {
		cond := *d.Condition
		cond.LastTransitionTime = metav1.NewTime(r.Clock.Now())
		meta.SetStatusCondition(&c.Status.Conditions, cond)
	}
	if equality.Semantic.DeepEqual(old.Status, c.Status) {
		return nil
	}
	return kit.PatchStatus(ctx, r.Client, c, old)
}
