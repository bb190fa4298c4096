package verification

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// act records the finished verifications (on each Backup, then on the Cluster, then deletes the
// Jobs: a restart in between records them again, once), keeps the Cluster's condition, and
// starts the verification Decide asks for.
func (r *Reconciler) act(ctx context.Context, c *v1.Cluster, d Decision) error {
	for _, o := range d.Record {
		if err := r.recordOnBackup(ctx, c.Namespace, o); err != nil {
			return err
		}
	}
	if err := r.recordOnCluster(ctx, c, d); err != nil {
		return err
	}
	for _, o := range d.Record {
		if err := r.Client.Delete(ctx, o.Job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil &&
			!apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the verification Job %s: %w", o.Job.Name, err)
		}
	}
	if d.Start != nil {
		return r.start(ctx, c, d.Start)
	}
	return nil
}

// recordOnBackup writes the outcome on its Backup, once: status.verification and the Verified
// condition. The Backup's phase and everything else stay as they are.
func (r *Reconciler) recordOnBackup(ctx context.Context, namespace string, o Outcome) error {
	var b v1.Backup
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: o.Backup}, &b); err != nil {
		return client.IgnoreNotFound(err)
	}
	if v := b.Status.Verification; v != nil && v.JobName == o.Job.Name {
		return nil // recorded already
	}
	old := b.DeepCopy()
	st := o.Status
	b.Status.Verification = &st
	cond := metav1.Condition{Type: v1.BackupVerified, Status: metav1.ConditionFalse, Reason: o.Status.Reason,
		Message: o.Message, ObservedGeneration: b.Generation, LastTransitionTime: metav1.NewTime(r.Clock.Now())}
	if o.Status.Passed {
		cond.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&b.Status.Conditions, cond)
	if err := kit.PatchStatus(ctx, r.Client, &b, old); err != nil {
		return err
	}
	kit.Emit(r.Recorder, &b, []kit.Event{outcomeEvent(o)})
	return nil
}

// recordOnCluster writes status.lastVerifiedBackup after the outcomes and the BackupsVerified
// condition, with an Event for each outcome not recorded before, and exports the metrics.
func (r *Reconciler) recordOnCluster(ctx context.Context, c *v1.Cluster, d Decision) error {
	old := c.DeepCopy()
	var events []kit.Event
	for _, o := range d.Record {
		if l := c.Status.LastVerifiedBackup; l != nil && l.JobName == o.Job.Name {
			continue
		}
		c.Status.LastVerifiedBackup = LastOf(o, c.Status.LastVerifiedBackup)
		events = append(events, outcomeEvent(o))
		observe(c.Namespace, c.Name, o, c.Status.LastVerifiedBackup)
	}
	if d.Condition == nil {
		meta.RemoveStatusCondition(&c.Status.Conditions, v1.ClusterBackupsVerified)
	} else {
		cond := *d.Condition
		cond.ObservedGeneration = c.Generation
		cond.LastTransitionTime = metav1.NewTime(r.Clock.Now())
		meta.SetStatusCondition(&c.Status.Conditions, cond)
	}
	if !equality.Semantic.DeepEqual(old.Status, c.Status) {
		if err := kit.PatchStatus(ctx, r.Client, c, old); err != nil {
			return err
		}
	}
	export(c.Namespace, c.Name, c.Status.LastVerifiedBackup)
	kit.Emit(r.Recorder, c, events)
	return nil
}

// start creates the verification Job, after an uncached read confirms that no verification Job
// of the Cluster exists (the cache may not have seen one just created).
func (r *Reconciler) start(ctx context.Context, c *v1.Cluster, s *Start) error {
	var jobs batchv1.JobList
	if err := r.APIReader.List(ctx, &jobs, client.InNamespace(c.Namespace), client.MatchingLabels{v1.ClusterLabel: c.Name},
		client.HasLabels{v1.VerificationLabel}); err != nil {
		return fmt.Errorf("listing the verification Jobs of %s: %w", c.Name, err)
	}
	if len(jobs.Items) > 0 {
		return nil // the cache is behind: the Job's event brings the Cluster back
	}
	image := r.OperatorImage
	if image == "" {
		image = specs.DefaultOperatorImage
	}
	job := specs.BuildVerificationJob(s.Backup, c, specs.VerificationJobParams{OperatorImage: image, Name: s.JobName, Archive: s.Archive})
	if err := r.Client.Create(ctx, job); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("creating the verification Job %s: %w", s.JobName, err)
	}
	ev := evStarted.With(s.Backup.Name, s.JobName, s.Why)
	kit.Emit(r.Recorder, c, []kit.Event{ev})
	kit.Emit(r.Recorder, s.Backup, []kit.Event{ev})
	return nil
}
