package cluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// applyPodMonitor performs w (stepPodMonitor). It never fails act: a PodMonitor is no reason to
// hold back anything else the Cluster needs. A failed write is logged and remembered, and the next
// reconcile reports it in the PodMonitorReady condition and tries again.
func (r *Reconciler) applyPodMonitor(ctx context.Context, c *v1.Cluster, w PodMonitorWork) []kit.Event {
	key := client.ObjectKey{Namespace: c.Namespace, Name: specs.PodMonitorName(c.Name)}
	var err error
	var done kit.Event
	switch {
	case w.Create != nil:
		if err = r.Client.Create(ctx, w.Create); apierrors.IsAlreadyExists(err) {
			// Made meanwhile by someone: the next reconcile reads it.
			err = nil
		} else if err == nil {
			done = evPodMonitorCreated.With(key.Name)
		}
	case w.Update != nil:
		if err = kit.PatchSpec(ctx, r.Client, w.Update, w.Live); err == nil {
			done = evPodMonitorUpdated.With(key.Name)
		}
	case w.Delete != nil:
		// Preconditioned on the object read: never delete a PodMonitor made since by someone else.
		uid, rv := w.Delete.UID, w.Delete.ResourceVersion
		if err = r.Client.Delete(ctx, w.Delete, client.Preconditions{UID: &uid, ResourceVersion: &rv}); apierrors.IsNotFound(err) {
			err = nil
		} else if err == nil {
			done = evPodMonitorDeleted.With(key.Name)
		}
	default:
		return nil
	}
	if apierrors.IsConflict(err) {
		// Changed since it was read: decided again on the next reconcile, not a failure.
		r.podMonitors.noteWrite(key, nil)
	} else {
		r.podMonitors.noteWrite(key, err)
	}
	if err != nil {
		log.FromContext(ctx).Info("could not write the PodMonitor", "podmonitor", key.Name, "error", fmt.Sprint(err))
		return nil
	}
	return []kit.Event{done}
}
