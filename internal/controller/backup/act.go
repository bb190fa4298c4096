package backup

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// act performs the decision: the Job first (creation or deletion), then the status patch under
// an optimistic lock, then the Events.
func (r *Reconciler) act(ctx context.Context, o Observation, d Decision) error {
	if d.Err != nil {
		return d.Err
	}
	b := o.Backup
	logger := log.FromContext(ctx).WithValues("backup", b.Name)
	if d.Action == ActNothing && d.DeleteJob == nil {
		return nil
	}
	if d.CreateJob != nil {
		// One that already exists is fine: the next reconcile reads it, and fails the Backup if it
		// is not this Backup's.
		if err := r.Client.Create(ctx, d.CreateJob); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Job %s: %w", d.CreateJob.Name, err)
		}
		logger.Info("created backup job", "job", b.Status.JobName, "instance", b.Status.InstanceName)
	}
	if d.DeleteJob != nil {
		bg := client.PropagationPolicy("Background")
		if err := r.Client.Delete(ctx, d.DeleteJob, bg); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Job %s: %w", d.DeleteJob.Name, err)
		}
	}
	updated := b.DeepCopy()
	updated.Status = d.Status
	if err := kit.PatchStatus(ctx, r.Client, updated, b); err != nil {
		return err
	}
	countFinished(b, updated)
	logger.Info("backup status", "phase", d.Status.Phase, "error", d.Status.Error)
	kit.Emit(r.Recorder, updated, d.Events)
	return nil
}
