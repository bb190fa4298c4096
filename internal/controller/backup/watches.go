package backup

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// clusterIndex indexes cached Backups by spec.cluster.name.
const clusterIndex = "spec.cluster.name"

// SetupWithManager registers the reconciler under the name "backup"; a Backup is reconciled when
// it or its Job changes, when the spec of a Cluster it belongs to or that bootstraps from it
// changes or the Cluster goes (the default deletion policy and a refused cleanup depend on them);
// a deleted Cluster's metrics are removed.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1.Backup{}, clusterIndex,
		func(o client.Object) []string { return []string{o.(*v1.Backup).Spec.Cluster.Name} }); err != nil {
		return fmt.Errorf("indexing Backups by Cluster: %w", err)
	}
	workers := r.MaxConcurrentReconciles
	if workers == 0 {
		workers = DefaultWorkers
	}
	b := ctrl.NewControllerManagedBy(mgr).For(&v1.Backup{}, builder.WithPredicates(skipCleanupConditionWrites())).
		Owns(&batchv1.Job{}).
		Watches(&v1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToBackups),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1.Cluster{}, forgetDeletedClusters()).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers})
	return b.Named("backup").Complete(r)
}

// clusterToBackups maps a Cluster to its Backups and to the Backup its bootstrap.recovery names.
func (r *Reconciler) clusterToBackups(ctx context.Context, o client.Object) []reconcile.Request {
	c, ok := o.(*v1.Cluster)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	if name := recoveryBackup(c); name != "" {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: c.Namespace, Name: name}})
	}
	var list v1.BackupList
	if err := r.Client.List(ctx, &list, client.InNamespace(c.Namespace), client.MatchingFields{clusterIndex: c.Name}); err != nil {
		log.FromContext(ctx).Error(err, "listing the Backups of a Cluster", "cluster", c.Name)
		return reqs
	}
	for _, b := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&b)})
	}
	return reqs
}

// recoveryBackup is the Backup a Cluster bootstraps from, "" when none.
func recoveryBackup(c *v1.Cluster) string {
	return c.Recovery().BackupName()
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
