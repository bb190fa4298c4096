package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// defaultRetentionWorkers is how many Clusters' passes may run at once: a pass mostly waits on
// the object store, and one slow store should not hold back the others.
const defaultRetentionWorkers = 2

// SetupWithManager registers the reconciler under the name "retention". A Cluster is looked at
// when it appears, when its spec changes, when its primary changes (a first primary makes it
// eligible), when one of its Backups completes (a pass due by then runs right away) and when its
// next pass is due.
func (r *RetentionReconciler) SetupWithManager(mgr ctrl.Manager, opts ...func(*controller.Options)) error {
	options := controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}
	if options.MaxConcurrentReconciles == 0 {
		options.MaxConcurrentReconciles = defaultRetentionWorkers
	}
	for _, o := range opts {
		o(&options)
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("retention").
		For(&v1.Cluster{}, builder.WithPredicates(retentionClusterChanged())).
		Watches(&v1.Backup{}, handler.EnqueueRequestsFromMapFunc(backupToItsCluster),
			builder.WithPredicates(backupCompletedPredicate())).
		WithOptions(options).
		Complete(r)
	if err != nil {
		return fmt.Errorf("building the retention controller: %w", err)
	}
	return nil
}

// retentionClusterChanged passes a Cluster's creation, spec changes and primary changes; status
// writes (the stamp of a pass among them) do not wake the reconciler.
func retentionClusterChanged() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, okOld := e.ObjectOld.(*v1.Cluster)
			n, okNew := e.ObjectNew.(*v1.Cluster)
			if !okOld || !okNew {
				return false
			}
			return o.Generation != n.Generation || o.Status.CurrentPrimary != n.Status.CurrentPrimary
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// backupCompletedPredicate passes only a Backup reaching the completed phase.
func backupCompletedPredicate() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, okOld := e.ObjectOld.(*v1.Backup)
			n, okNew := e.ObjectNew.(*v1.Backup)
			return okOld && okNew && backupJustCompleted(o, n)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// backupJustCompleted reports whether an update moved a Backup into the completed phase.
func backupJustCompleted(o, n *v1.Backup) bool {
	return o.Status.Phase != v1.BackupPhaseCompleted && n.Status.Phase == v1.BackupPhaseCompleted
}

// backupToItsCluster maps a Backup to the Cluster it backs up.
func backupToItsCluster(_ context.Context, o client.Object) []reconcile.Request {
	b, ok := o.(*v1.Backup)
	if !ok || b.Spec.Cluster.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Spec.Cluster.Name}}}
}
