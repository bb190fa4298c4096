package controller

import (
	"context"
	"fmt"

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
	o := &sbObservation{Now: r.Clock.Now(), Schedule: &sb}
	var err error
	if o.Children, err = listChildren(ctx, r.Client, &sb, r.cacheIndexed); err != nil {
		return nil, err
	}
	var cluster v1.Cluster
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: sb.Namespace, Name: sb.Spec.Cluster.Name}, &cluster); {
	case err == nil:
		o.Cluster = &cluster
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading Cluster %s: %w", sb.Spec.Cluster.Name, err)
	}
	return o, nil
}

// refresh re-reads the ScheduledBackup and its children from the API server before a Backup is
// created, so a cache lagging behind this operator's own writes can never yield a second Backup
// for a slot, re-create a pruned one, or overlap a running one.
// It reports false when the ScheduledBackup is gone or being deleted.
func (r *ScheduledBackupReconciler) refresh(ctx context.Context, o *sbObservation) (bool, error) {
	var sb v1.ScheduledBackup
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(o.Schedule), &sb); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if sb.DeletionTimestamp != nil {
		return false, nil
	}
	children, err := listChildren(ctx, r.APIReader, &sb, false)
	if err != nil {
		return false, err
	}
	o.Schedule, o.Children, o.Fresh = &sb, children, true
	r.expect.wrote(&sb)
	r.expect.satisfied(&sb, children)
	return true, nil
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
// the cache's index when indexed, else by label selector.
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
