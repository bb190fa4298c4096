package cluster

import (
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// routingStatusChanged passes Cluster updates that change which instance is primary, fenced or
// diverged: the Pod labels, and so the Services, follow these fields; and a recorded restart of
// the primary, whose Pod is deleted as soon as the record is seen (primary_update.go).
func routingStatusChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, okOld := e.ObjectOld.(*v1.Cluster)
		n, okNew := e.ObjectNew.(*v1.Cluster)
		if !okOld || !okNew {
			return false
		}
		return o.Status.CurrentPrimary != n.Status.CurrentPrimary || o.Status.TargetPrimary != n.Status.TargetPrimary ||
			!reflect.DeepEqual(o.Status.FencedInstances, n.Status.FencedInstances) ||
			!reflect.DeepEqual(o.Status.DivergedInstances, n.Status.DivergedInstances) ||
			!reflect.DeepEqual(o.Status.PrimaryRestart, n.Status.PrimaryRestart)
	}}
}
