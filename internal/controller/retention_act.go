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

// markExpired sets ArtifactsAvailable=False, reason Expired, on each Backup, with an optimistic
// lock retried on a fresh read after a conflict. A Backup deleted meanwhile needs nothing.
func (r *RetentionReconciler) markExpired(ctx context.Context, backups []*v1.Backup, policy string, now time.Time) error {
	var errs []error
	for _, b := range backups {
		key := client.ObjectKeyFromObject(b)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur v1.Backup
			if err := r.APIReader.Get(ctx, key, &cur); err != nil {
				return err
			}
			if cur.UID != b.UID || cur.Status.DestinationPath != b.Status.DestinationPath {
				return nil
			}
			next := cur.DeepCopy()
			if !meta.SetStatusCondition(&next.Status.Conditions, expiredCondition(&cur, policy, metav1.NewTime(now))) {
				return nil
			}
			return r.Client.Status().Patch(ctx, next, client.MergeFromWithOptions(&cur, client.MergeFromWithOptimisticLock{}))
		})
		if client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("marking Backup %s expired: %w", b.Name, err))
			continue
		}
		log.FromContext(ctx).Info("backup artifacts expired", "backup", b.Name, "backupId", b.Status.BackupID)
	}
	return errors.Join(errs...)
}
