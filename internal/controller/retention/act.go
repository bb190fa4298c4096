package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// stamp writes status.lastRetentionRunTime = now on the Cluster: a merge patch of that field
// alone under an optimistic lock, retried on a fresh read after a conflict. A stamp already at
// or after now is kept.
func (r *RetentionReconciler) stamp(ctx context.Context, key types.NamespacedName, now time.Time) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var c v1.Cluster
		if err := r.APIReader.Get(ctx, key, &c); err != nil {
			return err
		}
		if last := c.Status.LastRetentionRunTime; last != nil && !last.Time.Before(now) {
			return nil
		}
		next := c.DeepCopy()
		t := metav1.NewTime(now)
		next.Status.LastRetentionRunTime = &t
		return r.Client.Status().Patch(ctx, next, client.MergeFromWithOptions(&c, client.MergeFromWithOptimisticLock{}))
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stamping the retention pass on Cluster %s: %w", key.Name, err)
	}
	return nil
}

// markUnavailable sets the condition cond gives on each Backup (ArtifactsAvailable=False), with
// an optimistic lock retried on a fresh read after a conflict. cond sees the Backup as read
// fresh and returns false to leave it as it is. A Backup deleted meanwhile, or whose recorded
// directory changed, needs nothing.
func (r *RetentionReconciler) markUnavailable(ctx context.Context, backups []*v1.Backup,
	cond func(cur *v1.Backup) (metav1.Condition, bool),
) error {
	var errs []error
	for _, b := range backups {
		key := client.ObjectKeyFromObject(b)
		var reason string
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur v1.Backup
			if err := r.APIReader.Get(ctx, key, &cur); err != nil {
				return err
			}
			if cur.UID != b.UID || cur.Status.DestinationPath != b.Status.DestinationPath {
				return nil
			}
			c, ok := cond(&cur)
			next := cur.DeepCopy()
			if !ok || !meta.SetStatusCondition(&next.Status.Conditions, c) {
				return nil
			}
			reason = c.Reason
			return r.Client.Status().Patch(ctx, next, client.MergeFromWithOptions(&cur, client.MergeFromWithOptimisticLock{}))
		})
		if client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("marking the artifacts of Backup %s unavailable: %w", b.Name, err))
			continue
		}
		if reason != "" {
			log.FromContext(ctx).Info("backup artifacts unavailable", "backup", b.Name, "backupId", b.Status.BackupID, "reason", reason)
		}
	}
	return errors.Join(errs...)
}

// markExpired marks the Backups whose artifacts a pass of policy deleted.
func (r *RetentionReconciler) markExpired(ctx context.Context, backups []*v1.Backup, policy string, now time.Time) error {
	return r.markUnavailable(ctx, backups, func(cur *v1.Backup) (metav1.Condition, bool) {
		return expiredCondition(cur, policy, metav1.NewTime(now)), true
	})
}

// markMissing marks the Backups a pass did not find, unless they are marked unavailable already
// (an Expired mark is more precise).
func (r *RetentionReconciler) markMissing(ctx context.Context, backups []*v1.Backup, now time.Time) error {
	return r.markUnavailable(ctx, backups, func(cur *v1.Backup) (metav1.Condition, bool) {
		if !missingCandidate(cur) {
			return metav1.Condition{}, false
		}
		return missingCondition(cur, metav1.NewTime(now)), true
	})
}
