package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

// DefaultReportInterval is how often a Cluster is reconciled to collect instance reports when
// nothing else triggers it.
const DefaultReportInterval = 10 * time.Second

// clusterConflictRetry is how soon a reconcile that lost an optimistic-lock race runs again.
const clusterConflictRetry = 100 * time.Millisecond

// DefaultOperatorImage runs the bootstrap init container when OperatorImage is empty.
const DefaultOperatorImage = "cloudnative-mysql/operator:dev"

// ClusterReconciler turns a Cluster into instance PVCs and Pods, Secrets and certificates, Services
// and a PodDisruptionBudget, and aggregates the instances' state into the Cluster status. It
// never changes a database role itself: it sets targetPrimary on creation and labels Pods from
// the status the instances write.
type ClusterReconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads Secrets directly, so the operator does not cache every Secret.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// OperatorImage is the image of the bootstrap init container (this operator's image).
	OperatorImage string
	// Instances asks instance managers for their status.
	Instances instances.StatusSource
	// ReportInterval is the periodic requeue; 0 means DefaultReportInterval.
	ReportInterval time.Duration
	// MaxReadLag is how far a replica may lag before it leaves the read Services; 0 means
	// DefaultMaxReadLag.
	MaxReadLag time.Duration
}

// DefaultMaxReadLag is the replica lag past which a replica stops serving reads.
const DefaultMaxReadLag = 30 * time.Second

// Reconcile gathers the Cluster and its children, decides, and acts.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o, err := r.gather(ctx, req.NamespacedName)
	if err != nil || o == nil {
		return ctrl.Result{}, err
	}
	d := decideCluster(*o)
	if d.needsFreshLook() {
		if err := r.refresh(ctx, o); err != nil || o.Cluster == nil {
			return ctrl.Result{}, err
		}
		d = decideCluster(*o)
	}
	if err := r.act(ctx, o, d); err != nil {
		if apierrors.IsConflict(err) {
			// Someone (an instance writing currentPrimary, a user) changed an object since it was
			// read: decide again on the new state, soon, without reporting an error.
			log.FromContext(ctx).V(1).Info("retrying after a conflict", "error", err.Error())
			return ctrl.Result{RequeueAfter: clusterConflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if err := r.adjustSemiSync(ctx, o); err != nil {
		return ctrl.Result{}, err
	}
	interval := r.ReportInterval
	if interval == 0 {
		interval = DefaultReportInterval
	}
	return ctrl.Result{RequeueAfter: interval}, nil
}

// gather reads the Cluster, the children it controls, and the instances' reports; nil when the
// Cluster is gone or being deleted (owner references take care of the children).
func (r *ClusterReconciler) gather(ctx context.Context, key client.ObjectKey) (*clusterObservation, error) {
	var c v1.Cluster
	if err := r.Client.Get(ctx, key, &c); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if c.DeletionTimestamp != nil {
		return nil, nil
	}
	image := r.OperatorImage
	if image == "" {
		image = DefaultOperatorImage
	}
	o := &clusterObservation{Now: r.Clock.Now(), Cluster: &c, OperatorImage: image, MaxReadLag: r.MaxReadLag}
	if o.MaxReadLag == 0 {
		o.MaxReadLag = DefaultMaxReadLag
	}
	sel := []client.ListOption{client.InNamespace(c.Namespace), client.MatchingLabels{v1.ClusterLabel: c.Name}}
	var pods corev1.PodList
	var pvcs corev1.PersistentVolumeClaimList
	var svcs corev1.ServiceList
	for what, list := range map[string]client.ObjectList{"Pods": &pods, "PVCs": &pvcs, "Services": &svcs} {
		if err := r.Client.List(ctx, list, sel...); err != nil {
			return nil, fmt.Errorf("listing the %s of Cluster %s: %w", what, key, err)
		}
	}
	o.Pods = controlledBy(&c, pods.Items)
	o.PVCs = controlledBy(&c, pvcs.Items)
	o.Services = controlledBy(&c, svcs.Items)
	o.Reports, o.ReportErrors = r.reports(ctx, &c, o.Pods)
	return o, nil
}

// refresh re-reads the Cluster, its Pods and its PVCs from the API server, bypassing the cache;
// o.Cluster is nil when the Cluster is gone or being deleted.
func (r *ClusterReconciler) refresh(ctx context.Context, o *clusterObservation) error {
	var c v1.Cluster
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(o.Cluster), &c); err != nil || c.DeletionTimestamp != nil {
		o.Cluster = nil
		return client.IgnoreNotFound(err)
	}
	sel := []client.ListOption{client.InNamespace(c.Namespace), client.MatchingLabels{v1.ClusterLabel: c.Name}}
	var pods corev1.PodList
	var pvcs corev1.PersistentVolumeClaimList
	if err := r.APIReader.List(ctx, &pods, sel...); err != nil {
		return fmt.Errorf("listing the Pods of Cluster %s: %w", c.Name, err)
	}
	if err := r.APIReader.List(ctx, &pvcs, sel...); err != nil {
		return fmt.Errorf("listing the PVCs of Cluster %s: %w", c.Name, err)
	}
	o.Cluster, o.Pods, o.PVCs = &c, controlledBy(&c, pods.Items), controlledBy(&c, pvcs.Items)
	return nil
}

// reports asks the instances, logging each one that does not answer.
func (r *ClusterReconciler) reports(ctx context.Context, c *v1.Cluster, pods []corev1.Pod) (map[string]*instanceclient.Status, map[string]string) {
	if r.Instances == nil {
		return nil, nil
	}
	reports, errs := r.Instances.InstanceStatuses(ctx, c, pods)
	out := map[string]string{}
	for name, err := range errs {
		log.FromContext(ctx).Info("instance did not report", "instance", name, "error", err.Error())
		out[name] = err.Error()
	}
	return reports, out
}

// controlledBy keeps the objects whose controller is c: children are found by label, but only
// ones this Cluster controls are ever changed or deleted.
func controlledBy[T any, P interface {
	*T
	client.Object
}](c *v1.Cluster, items []T) []T {
	var out []T
	for i := range items {
		ref := metav1.GetControllerOf(P(&items[i]))
		if ref != nil && ref.UID == c.UID {
			out = append(out, items[i])
		}
	}
	return out
}
