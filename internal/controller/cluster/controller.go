package cluster

import (
	"context"
	"fmt"
	"os"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// DefaultReportInterval is how often a Cluster is reconciled to collect instance reports when
// nothing else triggers it.
const DefaultReportInterval = 10 * time.Second

// DefaultMaxReadLag is the replica lag past which a replica stops serving reads.
const DefaultMaxReadLag = 30 * time.Second

// Reconciler turns a Cluster into instance PVCs and Pods, Secrets and certificates, Services
// and a PodDisruptionBudget, and aggregates the instances' state into the Cluster status. It
// never changes a database role itself: it sets targetPrimary on creation and labels Pods from
// the status the instances write. It sets the primary's semi-sync acknowledgement count from the
// replicas' health.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads Secrets directly, so the operator does not cache every Secret.
	APIReader client.Reader
	// RESTMapper tells whether the PodMonitor kind is installed (podmonitor_gather.go).
	RESTMapper meta.RESTMapper
	Recorder   record.EventRecorder
	Clock      clock.PassiveClock
	// OperatorImage is the image of the bootstrap init container (this operator's image);
	// specs.DefaultOperatorImage when empty.
	OperatorImage string
	// Instances asks instance managers for their status; when it is also an
	// instances.SemiSyncSetter, the semi-sync count is applied through it, and when it is an
	// instances.ManagerUpdater, instance managers are updated in place to ManagerBinary.
	Instances instances.StatusSource
	// ManagerBinary is the instance manager binary every instance is brought to (the operator's
	// own); nil: instance managers are not updated in place.
	ManagerBinary *instances.ManagerBinary
	// ReportInterval is the periodic requeue; 0 means DefaultReportInterval.
	ReportInterval time.Duration
	// MaxReadLag is how far a replica may lag before it leaves the read Services; 0 means
	// DefaultMaxReadLag.
	MaxReadLag time.Duration

	// leases remembers when this operator saw each primary Lease change, on its own clock.
	leases leaseObservations
	// unanswered remembers the instances whose last ask went unanswered (ask.go).
	unanswered unansweredAsks
	// managerUpdates remembers the instance managers sent a new binary (manager_update_act.go).
	managerUpdates sentManagerUpdates
	// podMonitors remembers whether the PodMonitor kind was missing and the failed writes
	// (podmonitor_gather.go).
	podMonitors podMonitorMemory
}

// NewReconciler returns the production Reconciler: cached reads, Secrets read directly,
// instance reports over mTLS, and the operator image from specs.OperatorImageEnv.
func NewReconciler(mgr ctrl.Manager, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetAPIReader(),
		RESTMapper:    mgr.GetRESTMapper(),
		Recorder:      mgr.GetEventRecorderFor("cluster-controller"),
		Clock:         clk,
		OperatorImage: os.Getenv(specs.OperatorImageEnv),
		Instances:     instances.MTLS{Reader: mgr.GetAPIReader()},
	}
}

// SetupWithManager registers the reconciler under the name "cluster". A Cluster is reconciled
// when its spec changes, when the status fields that drive routing change (written by instances
// or the plugin), when a child it owns changes, and every ReportInterval to collect instance
// reports.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named("cluster").
		For(&v1.Cluster{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, routingStatusChanged(), fencingAnnotationChanged()))).
		Owns(&corev1.Pod{}).
		Owns(&corev1.PersistentVolumeClaim{}).
		Owns(&corev1.Service{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&corev1.ServiceAccount{}).
		Owns(&rbacv1.Role{}).
		Owns(&rbacv1.RoleBinding{}).
		Watches(&coordinationv1.Lease{}, leaseTransitions(r.Recorder)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("building the Cluster controller: %w", err)
	}
	return nil
}

// Reconcile gathers the Cluster, its children, its Secrets and the instances' reports, decides
// everything this reconcile does, and performs exactly that.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o, err := r.gather(ctx, req.NamespacedName)
	if err != nil || o == nil {
		if err == nil {
			forgetCluster(req.NamespacedName) // gone or being deleted
		}
		return ctrl.Result{}, err
	}
	d := Decide(*o)
	exportView(o, d)
	if err := r.act(ctx, o, d); err != nil {
		if apierrors.IsConflict(err) {
			// Someone (an instance writing currentPrimary, a user) changed an object since it was
			// read: decide again on the new state, soon, without reporting an error.
			log.FromContext(ctx).V(1).Info("retrying after a conflict", "error", err.Error())
		}
		return kit.ConflictOr(err)
	}
	return ctrl.Result{RequeueAfter: d.requeueAfter(o.Now, r.reportInterval())}, nil
}

func (r *Reconciler) reportInterval() time.Duration {
	if r.ReportInterval == 0 {
		return DefaultReportInterval
	}
	return r.ReportInterval
}
