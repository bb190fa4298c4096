package controller

import (
	"fmt"
	"os"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
)

// SetupWithManager registers the reconciler. A Cluster is reconciled when its spec changes, when
// the status fields that drive routing change (written by instances or the plugin), when a child
// it owns changes, and every ReportInterval to collect instance reports.
func (r *ClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named("cluster").
		For(&v1.Cluster{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, routingStatusChanged()))).
		Owns(&corev1.Pod{}).
		Owns(&corev1.PersistentVolumeClaim{}).
		Owns(&corev1.Service{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&corev1.ServiceAccount{}).
		Owns(&rbacv1.Role{}).
		Owns(&rbacv1.RoleBinding{}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("building the Cluster controller: %w", err)
	}
	return nil
}

// routingStatusChanged passes Cluster updates that change which instance is primary, fenced or
// diverged: the Pod labels, and so the Services, follow these fields.
func routingStatusChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, okOld := e.ObjectOld.(*v1.Cluster)
		n, okNew := e.ObjectNew.(*v1.Cluster)
		if !okOld || !okNew {
			return false
		}
		return o.Status.CurrentPrimary != n.Status.CurrentPrimary || o.Status.TargetPrimary != n.Status.TargetPrimary ||
			!reflect.DeepEqual(o.Status.FencedInstances, n.Status.FencedInstances) ||
			!reflect.DeepEqual(o.Status.DivergedInstances, n.Status.DivergedInstances)
	}}
}

// OperatorImageEnv names the environment variable holding the operator's own image, which the
// instance Pods' bootstrap init container runs; DefaultOperatorImage when unset.
const OperatorImageEnv = "OPERATOR_IMAGE_NAME"

// NewClusterReconciler returns the production ClusterReconciler: cached reads, Secrets read
// directly, instance reports over mTLS, and the operator image from OperatorImageEnv.
func NewClusterReconciler(mgr ctrl.Manager, clk clock.PassiveClock) *ClusterReconciler {
	return &ClusterReconciler{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetAPIReader(),
		Recorder:      mgr.GetEventRecorderFor("cluster-controller"),
		Clock:         clk,
		OperatorImage: os.Getenv(OperatorImageEnv),
		Instances:     instances.MTLS{Reader: mgr.GetAPIReader()},
	}
}
