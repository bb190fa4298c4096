package retention

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// clusterChanged passes a Cluster's creation, spec changes and primary changes; status writes
// (the stamp of a pass among them) do not wake the reconciler.
func clusterChanged() predicate.Funcs {
	return updates(true, func(e event.UpdateEvent) bool {
		o, okOld := e.ObjectOld.(*v1.Cluster)
		n, okNew := e.ObjectNew.(*v1.Cluster)
		if !okOld || !okNew {
			return false
		}
		return o.Generation != n.Generation || o.Status.CurrentPrimary != n.Status.CurrentPrimary
	})
}

// backupCompleted passes only a Backup reaching the completed phase.
func backupCompleted() predicate.Funcs {
	return updates(false, func(e event.UpdateEvent) bool {
		o, okOld := e.ObjectOld.(*v1.Backup)
		n, okNew := e.ObjectNew.(*v1.Backup)
		return okOld && okNew && backupJustCompleted(o, n)
	})
}

// updates passes the updates pass accepts, and creations when creations is set; never a deletion
// or a generic event.
func updates(creations bool, pass func(event.UpdateEvent) bool) predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return creations },
		UpdateFunc:  pass,
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// backupJustCompleted reports whether an update moved a Backup into the completed phase, or
// recorded when a completed Backup completed (what decides whether a pass is due).
func backupJustCompleted(o, n *v1.Backup) bool {
	return n.Status.Phase == v1.BackupPhaseCompleted &&
		(o.Status.Phase != v1.BackupPhaseCompleted || !o.Status.CompletedAt.Equal(n.Status.CompletedAt))
}
