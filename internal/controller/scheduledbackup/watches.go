package scheduledbackup

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

const (
	// scheduledBackupClusterIndex indexes ScheduledBackups by spec.cluster.name.
	scheduledBackupClusterIndex = "spec.cluster.name"
	// backupScheduleIndex indexes cached Backups by their ScheduledBackup label, so listing one
	// schedule's children does not scan every Backup of the namespace.
	backupScheduleIndex = "metadata.labels.scheduled-backup"
)

// index registers the cache indexes the reconciler lists through.
func (r *Reconciler) index(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1.ScheduledBackup{}, scheduledBackupClusterIndex,
		func(o client.Object) []string { return []string{o.(*v1.ScheduledBackup).Spec.Cluster.Name} }); err != nil {
		return fmt.Errorf("indexing ScheduledBackups by Cluster: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1.Backup{}, backupScheduleIndex,
		func(o client.Object) []string {
			if name := o.GetLabels()[v1.ScheduledBackupLabel]; name != "" {
				return []string{name}
			}
			return nil
		}); err != nil {
		return fmt.Errorf("indexing Backups by ScheduledBackup: %w", err)
	}
	r.cacheIndexed = true
	return nil
}

// backupToSchedule maps a child Backup to the ScheduledBackup its label names.
func backupToSchedule(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[v1.ScheduledBackupLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// childSettled passes the child events that can let a waiting schedule go on or change its
// conditions: a Backup finishing, starting to be deleted, being deleted, or being relabelled.
func childSettled() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldB, okOld := e.ObjectOld.(*v1.Backup)
			newB, okNew := e.ObjectNew.(*v1.Backup)
			if !okOld || !okNew {
				return false
			}
			return oldB.IsDone() != newB.IsDone() ||
				(oldB.DeletionTimestamp == nil) != (newB.DeletionTimestamp == nil) ||
				oldB.Labels[v1.ScheduledBackupLabel] != newB.Labels[v1.ScheduledBackupLabel] ||
				(newB.Status.Phase == v1.BackupPhaseFailed && oldB.Status.Error != newB.Status.Error)
		},
		DeleteFunc:  func(e event.DeleteEvent) bool { return e.Object.GetLabels()[v1.ScheduledBackupLabel] != "" },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// creations passes only creations.
func creations() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// clusterToSchedules maps a new Cluster to the ScheduledBackups that name it.
func (r *Reconciler) clusterToSchedules(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1.ScheduledBackupList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace()),
		client.MatchingFields{scheduledBackupClusterIndex: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the ScheduledBackups of a Cluster", "cluster", o.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, sb := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&sb)})
	}
	return out
}
