package kit

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// ToCluster enqueues the Cluster of the object's namespace that cluster names; nothing when it
// names none.
func ToCluster(cluster func(client.Object) string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if n := cluster(o); n != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: n}}}
		}
		return nil
	})
}

// ClusterOf names the Cluster a Backup or a ScheduledBackup is of; "" for other objects.
func ClusterOf(o client.Object) string {
	switch x := o.(type) {
	case *v1.Backup:
		return x.Spec.Cluster.Name
	case *v1.ScheduledBackup:
		return x.Spec.Cluster.Name
	}
	return ""
}

// ClusterChanges passes Cluster creations, the updates changed accepts (old, new), and the
// deletions when deletions is true; never generic events.
func ClusterChanges(changed func(old, new *v1.Cluster) bool, deletions bool) predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, okOld := e.ObjectOld.(*v1.Cluster)
			n, okNew := e.ObjectNew.(*v1.Cluster)
			return okOld && okNew && changed(o, n)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return deletions },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
