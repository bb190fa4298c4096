package scheduledbackup

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// gather reads the ScheduledBackup, its children and its Cluster through the cache; the
// Observation's Schedule is nil when the ScheduledBackup is gone or being deleted.
//
// Two questions to the decision say what else to read. When it would write anything and the cache
// may not show this process's own writes yet, the schedule and the Backups this process created
// are read again from the API server (refresh): from a view behind them, a create could make a
// Backup that must not exist, and a status patch would only fail its optimistic lock. When it
// would create a Backup, the Backup already holding that name, if one does and does not carry the
// schedule's label, is the Occupant the decision skips the slot for.
func (r *Reconciler) gather(ctx context.Context, key client.ObjectKey) (Observation, error) {
	var sb v1.ScheduledBackup
	if err := r.Client.Get(ctx, key, &sb); err != nil || sb.DeletionTimestamp != nil {
		return Observation{}, client.IgnoreNotFound(err)
	}
	o := Observation{Now: r.Clock.Now(), Schedule: &sb, Unrecorded: r.expect.unrecordedOf(&sb), MinInterval: r.MinInterval,
		SkipImmediatelyDefault: r.SkipImmediatelyDefault}
	var err error
	if o.Children, err = listChildren(ctx, r.Client, &sb, r.cacheIndexed); err != nil {
		return Observation{}, err
	}
	o.Deleted = r.expect.deletedOf(&sb, o.Children)
	var cluster v1.Cluster
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: sb.Namespace, Name: sb.Spec.Cluster.Name}, &cluster); {
	case err == nil:
		o.Cluster = &cluster
	case !apierrors.IsNotFound(err):
		return Observation{}, fmt.Errorf("reading Cluster %s: %w", sb.Spec.Cluster.Name, err)
	}
	if Decide(o).needsFreshLook(o) && !r.expect.satisfied(o.Schedule, o.Children) {
		if err := r.refresh(ctx, &o); err != nil || o.Schedule == nil {
			return Observation{}, err
		}
	}
	if d := Decide(o); d.Create != nil {
		if o.Occupant, err = r.occupant(ctx, o, d.Create.Name); err != nil {
			return Observation{}, err
		}
	}
	return o, nil
}

// refresh re-reads from the API server what a cache lagging behind this operator's own writes
// could hide: the ScheduledBackup, and each Backup this process created that the cache does not
// show yet, by its deterministic name. So a lagging cache can never yield a second Backup for a
// slot, re-create a pruned one, or overlap a running one, and no read scans the namespace's
// Backups. It leaves o's Schedule nil when the ScheduledBackup is gone or being deleted.
func (r *Reconciler) refresh(ctx context.Context, o *Observation) error {
	var sb v1.ScheduledBackup
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(o.Schedule), &sb); err != nil || sb.DeletionTimestamp != nil {
		o.Schedule = nil
		return client.IgnoreNotFound(err)
	}
	children, err := r.freshChildren(ctx, &sb, o.Children)
	if err != nil {
		return err
	}
	o.Schedule, o.Children, o.Fresh = &sb, children, true
	r.expect.wrote(&sb)
	return nil
}

// freshChildren is cached with each Backup this process created and the cache does not show yet
// read from the API server. One that is gone, or no longer carries sb's label, is not waited for
// any more.
func (r *Reconciler) freshChildren(ctx context.Context, sb *v1.ScheduledBackup, cached []v1.Backup) ([]v1.Backup, error) {
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

// occupant reads the Backup holding name, through the cache unless o was read fresh; nil when
// there is none or it is this schedule's own (the decision adopts it).
func (r *Reconciler) occupant(ctx context.Context, o Observation, name string) (*v1.Backup, error) {
	reader := client.Reader(r.Client)
	if o.Fresh {
		reader = r.APIReader
	}
	var b v1.Backup
	if err := reader.Get(ctx, client.ObjectKey{Namespace: o.Schedule.Namespace, Name: name}, &b); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if b.Labels[v1.ScheduledBackupLabel] == o.Schedule.Name {
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
