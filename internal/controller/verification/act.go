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
	cond, keep := BackupCondition(o, meta.FindStatusCondition(b.Status.Conditions, v1.BackupVerified))
	if !keep {
		cond.ObservedGeneration, cond.LastTransitionTime = b.Generation, metav1.NewTime(r.Clock.Now())
		meta.SetStatusCondition(&b.Status.Conditions, cond)
	}
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
	var observed []Outcome
	for _, o := range d.Record {
		if l := c.Status.LastVerifiedBackup; l != nil && l.JobName == o.Job.Name {
			continue
		}
		c.Status.LastVerifiedBackup = LastOf(o, c.Status.LastVerifiedBackup)
		events = append(events, outcomeEvent(o))
		observed = append(observed, o)
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
	// Counted once written: a conflict retried does not count again.
	for _, o := range observed {
		count(c.Namespace, c.Name, o)
	}
	export(c.Namespace, c.Name, c.Status.LastVerifiedBackup)
	kit.Emit(r.Recorder, c, events)
	return nil
}

// start creates the verification Job. Two uncached reads come first, since the cache may lag:
// no verification Job of the Cluster exists (one just created), and the Cluster's last
// verification is the one the decision saw (one just recorded, whose Job was deleted).
func (r *Reconciler) start(ctx context.Context, c *v1.Cluster, s *Start) error {
	var jobs batchv1.JobList
	if err := r.APIReader.List(ctx, &jobs, client.InNamespace(c.Namespace), client.MatchingLabels{v1.ClusterLabel: c.Name},
		client.HasLabels{v1.VerificationLabel}); err != nil {
		return fmt.Errorf("listing the verification Jobs of %s: %w", c.Name, err)
	}
	if len(jobs.Items) > 0 {
		return nil // the Job's event brings the Cluster back
	}
	var fresh v1.Cluster
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(c), &fresh); err != nil {
		return fmt.Errorf("reading Cluster %s: %w", c.Name, err)
	}
	if !equality.Semantic.DeepEqual(fresh.Status.LastVerifiedBackup, c.Status.LastVerifiedBackup) {
		return nil // decided on a stale Cluster: its update brings it back
	}
	image := r.OperatorImage
	if image == "" {
		image = specs.DefaultOperatorImage
	}
	job := specs.BuildVerificationJob(s.Backup, c, specs.VerificationJobParams{OperatorImage: image, Name: s.JobName,
		Due: s.Due, Archive: s.Archive})
	if err := r.Client.Create(ctx, job); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return r.nameTaken(ctx, c, s)
		}
		return fmt.Errorf("creating the verification Job %s: %w", s.JobName, err)
	}
	ev := evStarted.With(s.Backup.Name, s.JobName, s.Why)
	kit.Emit(r.Recorder, c, []kit.Event{ev})
	kit.Emit(r.Recorder, s.Backup, []kit.Event{ev})
	return nil
}

// nameTaken explains a Job name already taken: by this verification (created meanwhile: fine),
// or by another Job, which is left alone and reported.
func (r *Reconciler) nameTaken(ctx context.Context, c *v1.Cluster, s *Start) error {
	var j batchv1.Job
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: s.JobName}, &j); err != nil {
		return client.IgnoreNotFound(err)
	}
	if j.Labels[v1.VerificationLabel] == s.Backup.Name && j.Labels[v1.ClusterLabel] == c.Name {
		return nil
	}
	kit.Emit(r.Recorder, c, []kit.Event{evNameTaken.With(s.JobName, s.Backup.Name)})
	return fmt.Errorf("a Job named %s that is not this Cluster's verification of Backup %s exists", s.JobName, s.Backup.Name)
}

// deleteJobsOf deletes the verification Jobs of a Cluster that is gone: their Backups may outlive
// it, and with them the Jobs and their scratch volumes.
func (r *Reconciler) deleteJobsOf(ctx context.Context, namespace, cluster string) error {
	var jobs batchv1.JobList
	if err := r.Client.List(ctx, &jobs, client.InNamespace(namespace), client.MatchingLabels{v1.ClusterLabel: cluster},
		client.HasLabels{v1.VerificationLabel}); err != nil {
		return fmt.Errorf("listing the verification Jobs of %s: %w", cluster, err)
	}
	for i := range jobs.Items {
		if err := r.Client.Delete(ctx, &jobs.Items[i], client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil &&
			!apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the verification Job %s: %w", jobs.Items[i].Name, err)
		}
	}
	return nil
}
