package controller

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// gather reads the ScheduledBackup, its children and its Cluster through the cache; nil when the
// ScheduledBackup is gone or being deleted.
func (r *ScheduledBackupReconciler) gather(ctx context.Context, key client.ObjectKey) (*sbObservation, error) {
	var sb v1.ScheduledBackup
	if err := r.Client.Get(ctx, key, &sb); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if sb.DeletionTimestamp != nil {
		return nil, nil
	}
	o := &sbObservation{Now: r.Clock.Now(), Schedule: &sb, Unrecorded: r.expect.unrecordedOf(&sb)}
	var err error
	if o.Children, err = listChildren(ctx, r.Client, &sb, r.cacheIndexed); err != nil {
		return nil, err
	}
	o.Deleted = r.expect.deletedOf(&sb, o.Children)
	var cluster v1.Cluster
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: sb.Namespace, Name: sb.Spec.Cluster.Name}, &cluster); {
	case err == nil:
		o.Cluster = &cluster
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading Cluster %s: %w", sb.Spec.Cluster.Name, err)
	}
	return o, nil
}

// refresh re-reads from the API server, before a Backup is created, what a cache lagging behind
// this operator's own writes could hide: the ScheduledBackup, and each Backup this process created
// that the cache does not show yet, by its deterministic name. So a lagging cache can never yield a
// second Backup for a slot, re-create a pruned one, or overlap a running one, and no read scans the
// namespace's Backups. It reports false when the ScheduledBackup is gone or being deleted.
func (r *ScheduledBackupReconciler) refresh(ctx context.Context, o *sbObservation) (bool, error) {
	var sb v1.ScheduledBackup
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(o.Schedule), &sb); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if sb.DeletionTimestamp != nil {
		return false, nil
	}
	children, err := r.freshChildren(ctx, &sb, o.Children)
	if err != nil {
		return false, err
	}
	o.Schedule, o.Children, o.Fresh = &sb, children, true
	r.expect.wrote(&sb)
	return true, nil
}

// freshChildren is cached with each Backup this process created and the cache does not show yet
// read from the API server. One that is gone, or no longer carries sb's label, is not waited for
// any more.
func (r *ScheduledBackupReconciler) freshChildren(ctx context.Context, sb *v1.ScheduledBackup, cached []v1.Backup) ([]v1.Backup, error) {
	out := slices.Clone(cached)
	for _, name := range r.expect.pending(sb) {
		var b v1.Backup
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: sb.Namespace, Name: name}, &b)
		switch {
		case apierrors.IsNotFound(err):
			r.expect.gone(sb, name)
			continue
		case err != nil:
			return nil, fmt.Errorf("reading Backup %s: %w", name, err)
		case b.Labels[v1.ScheduledBackupLabel] != sb.Name:
			r.expect.gone(sb, name)
			continue
		}
		i := slices.IndexFunc(out, func(c v1.Backup) bool { return c.Name == name })
		if i < 0 {
			out = append(out, b)
		} else {
			out[i] = b
		}
	}
	return out, nil
}

// occupant reads the Backup holding name; nil when it is this schedule's own (the next decision
// adopts it) or gone.
func (r *ScheduledBackupReconciler) occupant(ctx context.Context, sb *v1.ScheduledBackup, name string) (*v1.Backup, error) {
	var b v1.Backup
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: sb.Namespace, Name: name}, &b); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if b.Labels[v1.ScheduledBackupLabel] == sb.Name {
		return nil, nil
	}
	return &b, nil
}

// listChildren lists the Backups carrying sb's label, whatever their owner references; through
// the cache's index when indexed, else by label selector (a reader without the index).
func listChildren(ctx context.Context, c client.Reader, sb *v1.ScheduledBackup, indexed bool) ([]v1.Backup, error) {
	var list v1.BackupList
	var selector client.ListOption = client.MatchingLabels{v1.ScheduledBackupLabel: sb.Name}
	if indexed {
		selector = client.MatchingFields{backupScheduleIndex: sb.Name}
	}
	if err := c.List(ctx, &list, client.InNamespace(sb.Namespace), selector); err != nil {
		return nil, fmt.Errorf("listing the Backups of ScheduledBackup %s: %w", sb.Name, err)
	}
	return list.Items, nil
}

// unrecordedRunning says a Backup this process created, and has not recorded in status yet, is
// seen and has not finished. One not seen (deleted, or not in the cache yet) does not count: its
// slot is recorded without waiting.
func (o *sbObservation) unrecordedRunning() bool {
	for name := range o.Unrecorded {
		i := slices.IndexFunc(o.Children, func(b v1.Backup) bool { return b.Name == name })
		if i >= 0 && !o.Children[i].IsDone() {
			return true
		}
	}
	return false
}
