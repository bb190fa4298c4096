package retention

import (
	"context"
	"fmt"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
)

// defaultWorkers is how many Clusters' passes may run at once: a pass mostly waits on the object
// store, and one slow store should not hold back the others.
const defaultWorkers = 2

// Reconciler runs the retention pass of each Cluster that has a retention policy, an object
// store and an established primary, at most once per Interval: it deletes the expired base
// backups, the binlog segments no retained backup can use and interrupted uploads from the
// object store. It never deletes Backup objects; the Backups whose artifacts it deleted get the
// condition ArtifactsAvailable=False, reason Expired.
//
// A pass that fails (the object store unreachable, a Secret unreadable) is not stamped in
// status.lastRetentionRunTime, emits a Warning Event and is retried with backoff; the pass itself
// leaves the store valid whenever it stops.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server: what a pass protects is read fresh before it deletes.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// OpenStore opens a Cluster's object store; objectstore.New when nil. The operator sets
	// operator.OpenObjectStore, whose clients refuse loopback and link-local addresses.
	OpenStore func(objectstore.Config) (*objectstore.Client, error)
	// MaxConcurrentReconciles defaults to defaultWorkers.
	MaxConcurrentReconciles int

	failures failures
}

// NewReconciler returns the production reconciler for mgr.
func NewReconciler(mgr ctrl.Manager, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("retention-controller"), Clock: clk}
}

// SetupWithManager registers the reconciler under the name "retention". A Cluster is looked at
// when it appears, when its spec changes, when its primary changes (a first primary makes it
// eligible), when one of its Backups completes (a pass due by then runs right away) and when its
// next pass is due.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts ...func(*controller.Options)) error {
	options := controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}
	if options.MaxConcurrentReconciles == 0 {
		options.MaxConcurrentReconciles = defaultWorkers
	}
	for _, o := range opts {
		o(&options)
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("retention").
		For(&v1.Cluster{}, builder.WithPredicates(clusterChanged())).
		Watches(&v1.Backup{}, kit.ToCluster(kit.ClusterOf),
			builder.WithPredicates(backupCompleted())).
		WithOptions(options).
		Complete(r)
	if err != nil {
		return fmt.Errorf("building the retention controller: %w", err)
	}
	return nil
}

// Reconcile gathers the Cluster (fresh, with what its pass protects, when a pass may be due),
// decides whether its pass is due, runs the pass and records its outcome.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o, in, err := r.gather(ctx, req.NamespacedName)
	if o.Cluster == nil {
		r.failures.reset(req.NamespacedName)
		if client.IgnoreNotFound(err) == nil {
			forgetCluster(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if o.Policy.IsZero() && o.PolicyErr == nil {
		// No retention asked for (any more): no pass, no series (a last failure would alert for
		// ever otherwise).
		forgetCluster(req.NamespacedName)
	} else {
		exportCluster(o.Cluster)
	}
	d := Decide(o)
	if !d.Due {
		r.explainNoPass(ctx, o.Cluster, d)
		return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
	}
	var report retentionpass.Report
	if err == nil {
		report, err = r.runPass(ctx, o, in)
	}
	countPass(o.Cluster, report, err)
	out := DecideOutcome(describePolicy(o.Cluster.Spec.Backup), report, err, r.failures.after(req.NamespacedName, err))
	return r.record(ctx, o, in, report, err, out)
}
