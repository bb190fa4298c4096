package retention

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
)

// passTimeout bounds one pass, so a hung object store cannot hold a worker forever.
const passTimeout = 30 * time.Minute

// explainNoPass logs, and emits the Events of, a decision that skips c's pass.
func (r *Reconciler) explainNoPass(ctx context.Context, c *v1.Cluster, d Decision) {
	if d.Skip == "" {
		return
	}
	log.FromContext(ctx).V(1).Info("no retention pass", "reason", d.Skip)
	kit.Emit(r.Recorder, c, d.Events)
}

// runPass opens the store and runs the pass of o's Cluster with the protections of in.
func (r *Reconciler) runPass(ctx context.Context, o Observation, in *passInput) (retentionpass.Report, error) {
	log.FromContext(ctx).Info("retention pass", "policy", describePolicy(o.Cluster.Spec.Backup))
	open := r.OpenStore
	if open == nil {
		open = objectstore.New
	}
	store, err := open(in.Config)
	if err != nil {
		return retentionpass.Report{}, fmt.Errorf("opening the object store: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, passTimeout)
	defer cancel()
	name, dir := o.Cluster.Name, o.Cluster.ObjectStoreDirName()
	prot := protectedBackups(name, dir, in.Clusters, in.Backups)
	report, err := retentionpass.Run(ctx, store, dir, o.Policy, retentionpass.Options{
		Now: o.Now, IncompleteGrace: incompleteGrace(name, in.Backups), Protected: prot.protects,
		Namespace: o.Cluster.Namespace, Incarnations: o.Cluster.OwnIncarnations()})
	if err != nil {
		return report, fmt.Errorf("bucket %s, %s: %w", in.Config.Bucket, objectstore.ClusterDir(in.Config.Path, dir), err)
	}
	return report, nil
}

// record carries out the outcome of a pass that ended with report and passErr: the Backups whose
// directory it deleted (expired, or left without metadata.json by an earlier interrupted pass)
// are marked expired, even after a failure since what is deleted stays deleted; after a success,
// the completed Backups recorded in the cluster's directory whose metadata.json the pass did not
// find are marked missing (marks an earlier pass lost); a success is stamped; the Events go on
// the Cluster. in is nil when the pass failed before it started.
func (r *Reconciler) record(ctx context.Context, o Observation, in *passInput, report retentionpass.Report,
	passErr error, out Outcome,
) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	var markErr error
	gone := slices.Concat(report.Expired, report.Incomplete)
	if in != nil && len(gone) > 0 {
		policy := describePolicy(o.Cluster.Spec.Backup)
		markErr = r.markExpired(ctx, backupsOfExpired(gone, in.Config, in.Backups), policy, o.Now)
	}
	if in != nil && passErr == nil && report.Listed {
		missing := backupsMissing(o.Cluster.ObjectStoreDirName(), report.Found, gone, in.Config, in.Backups)
		markErr = errors.Join(markErr, r.markMissing(ctx, missing, o.Now))
	}
	if out.Stamp {
		if err := r.stamp(ctx, client.ObjectKeyFromObject(o.Cluster), o.Now); err != nil {
			return ctrl.Result{}, err
		}
	}
	if passErr != nil {
		logger.Error(passErr, "retention pass failed", "retry", out.RequeueAfter)
	} else {
		logger.Info("retention pass done", "expired", len(report.Expired), "expiredBytes", report.ExpiredBytes,
			"segments", report.Segments, "segmentBytes", report.SegmentBytes, "incomplete", len(report.Incomplete))
	}
	kit.Emit(r.Recorder, o.Cluster, out.Events)
	if markErr != nil {
		return ctrl.Result{}, markErr
	}
	return ctrl.Result{RequeueAfter: out.RequeueAfter}, nil
}

// stamp writes status.lastRetentionRunTime = now on the Cluster: a merge patch of that field
// alone under an optimistic lock, retried on a fresh read after a conflict. A stamp already at
// or after now is kept.
func (r *Reconciler) stamp(ctx context.Context, key types.NamespacedName, now time.Time) error {
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
		return kit.PatchStatus(ctx, r.Client, next, &c)
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
func (r *Reconciler) markUnavailable(ctx context.Context, backups []*v1.Backup,
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
			return kit.PatchStatus(ctx, r.Client, next, &cur)
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
func (r *Reconciler) markExpired(ctx context.Context, backups []*v1.Backup, policy string, now time.Time) error {
	return r.markUnavailable(ctx, backups, func(cur *v1.Backup) (metav1.Condition, bool) {
		return expiredCondition(cur, policy, metav1.NewTime(now)), true
	})
}

// markMissing marks the Backups a pass did not find, unless they are marked unavailable already
// (an Expired mark is more precise).
func (r *Reconciler) markMissing(ctx context.Context, backups []*v1.Backup, now time.Time) error {
	return r.markUnavailable(ctx, backups, func(cur *v1.Backup) (metav1.Condition, bool) {
		if !missingCandidate(cur) {
			return metav1.Condition{}, false
		}
		return missingCondition(cur, metav1.NewTime(now)), true
	})
}
