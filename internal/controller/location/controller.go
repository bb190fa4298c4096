package location

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// Reconciler claims each Cluster's object store location and records the claim in
// status.objectStoreLocation.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads Secrets, Backups and other Clusters from the API server.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// OpenStore opens an object store; objectstore.New when nil. The operator sets
	// operator.OpenObjectStore, whose clients refuse loopback and link-local addresses.
	OpenStore func(objectstore.Config) (*objectstore.Client, error)
}

// NewReconciler returns the production reconciler for mgr.
func NewReconciler(mgr ctrl.Manager, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("location-controller"), Clock: clk}
}

// SetupWithManager registers the reconciler under the name "location". A Cluster is looked at
// when it appears, when its spec changes, when its restore is verified and when its primary
// changes; a claim that waits, a location in use and a held location are looked at again after
// their own delays.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named("location").
		For(&v1.Cluster{}, builder.WithPredicates(clusterChanged())).
		Complete(r)
	if err != nil {
		return fmt.Errorf("building the location controller: %w", err)
	}
	return nil
}

// clusterChanged passes creations, spec changes, a verified restore and a new primary.
func clusterChanged() predicate.Funcs {
	return kit.ClusterChanges(func(o, n *v1.Cluster) bool {
		return o.Generation != n.Generation || o.Status.CurrentPrimary != n.Status.CurrentPrimary ||
			(o.Status.Recovery == nil) != (n.Status.Recovery == nil)
	}, false)
}

// Reconcile gathers the location, decides the claim and acts.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var c v1.Cluster
	if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if c.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	if kit.AwaitsFirstStatus(&c) {
		return ctrl.Result{RequeueAfter: kit.FirstStatusWait}, nil
	}
	if c.ObjectStoreLocation() == "" {
		if c.Status.ObjectStoreLocation == nil {
			return ctrl.Result{}, nil
		}
		return kit.ConflictOr(r.record(ctx, &c, nil))
	}
	o, store, err := r.gather(ctx, &c)
	if err != nil {
		return r.failed(ctx, &c, o.Location, err)
	}
	d := Decide(o)
	if d.Action != ActNone {
		etag := ""
		if d.Action == ActTakeover {
			etag = o.ClaimETag
		}
		if _, err := store.WriteClaim(ctx, c.ObjectStoreDirName(), d.Claim, etag); err != nil {
			if errors.Is(err, objectstore.ErrConflict) {
				// Another writer got there first: read its marker again.
				return ctrl.Result{RequeueAfter: kit.ConflictRetry}, nil
			}
			return r.failed(ctx, &c, o.Location, fmt.Errorf("writing the location's marker: %w", err))
		}
	}
	if err := r.record(ctx, &c, &d.Status); err != nil {
		return kit.ConflictOr(err)
	}
	kit.Emit(r.Recorder, &c, d.Events)
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// failed reports a claim that could not be checked or written, and looks again after
// retryFailed. A location already held stays held (a store that cannot be reached now does not
// end a claim); otherwise the claim is pending.
func (r *Reconciler) failed(ctx context.Context, c *v1.Cluster, location string, err error) (ctrl.Result, error) {
	log.FromContext(ctx).Error(err, "checking the object store location", "location", location)
	r.Recorder.Event(c, evClaimFailed.Type, evClaimFailed.Reason, evClaimFailed.With(location, err.Error()).Message)
	if c.HoldsObjectStoreLocation() {
		return ctrl.Result{RequeueAfter: retryFailed}, nil
	}
	st := v1.ObjectStoreLocationStatus{Location: location, Phase: v1.LocationPending, Reason: ReasonClaimPending,
		Message: "the location could not be checked: " + err.Error()}
	if perr := r.record(ctx, c, &st); perr != nil {
		return kit.ConflictOr(perr)
	}
	return ctrl.Result{RequeueAfter: retryFailed}, nil
}

// record patches status.objectStoreLocation when it changed. A Cluster that does not hold its
// location shows no archive window: status.binlogArchive is cleared with it.
func (r *Reconciler) record(ctx context.Context, c *v1.Cluster, st *v1.ObjectStoreLocationStatus) error {
	old := c.DeepCopy()
	if st != nil && len(st.Message) > 4000 {
		st.Message = st.Message[:4000] + "…"
	}
	c.Status.ObjectStoreLocation = st
	if st == nil || st.Phase != v1.LocationClaimed {
		c.Status.BinlogArchive = nil
	}
	if equality.Semantic.DeepEqual(old.Status, c.Status) {
		return nil
	}
	return kit.PatchStatus(ctx, r.Client, c, old)
}
