package ctrlworld

import (
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/location"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// ClaimLocation runs the operator's location reconciler once on the Cluster name, as the operator
// does before any backup or archive, with open (objectstore.New when nil), and returns the claim
// it recorded: Claimed in a location of its own, InUse where another Cluster holds it.
func (w *World) ClaimLocation(name string, open func(objectstore.Config) (*objectstore.Client, error)) *v1.ObjectStoreLocationStatus {
	w.T.Helper()
	r := &location.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock, OpenStore: open}
	if _, err := r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key(name)}); err != nil {
		w.T.Fatalf("claiming the location of %s: %v", name, err)
	}
	return Get[v1.Cluster](w, name).Status.ObjectStoreLocation
}
