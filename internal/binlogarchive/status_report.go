package binlogarchive

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/pitr"
)

// ReportStatus writes the primary's view of the archive on its Cluster, status.binlogArchive,
// when it changed (ReportedAt aside); failures are returned for the caller to log.
func (r ClusterReporter) ReportStatus(ctx context.Context, h Health, index *objectstore.Index) error {
	backups, err := r.Backups(ctx)
	if err != nil {
		return fmt.Errorf("listing the base backups: %w", err)
	}
	st, err := ArchiveStatus(r.Instance, h, index, backups)
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cluster := &v1alpha1.Cluster{}
		if err := r.Client.Get(ctx, r.Cluster, cluster); err != nil {
			return err
		}
		if old := cluster.Status.BinlogArchive; old != nil {
			was := old.DeepCopy()
			was.ReportedAt = nil
			if equality.Semantic.DeepEqual(was, &st) {
				return nil
			}
		}
		patch := client.MergeFromWithOptions(cluster.DeepCopy(), client.MergeFromWithOptimisticLock{})
		now := metav1.NewTime(r.Clock.Now())
		st.ReportedAt = &now
		cluster.Status.BinlogArchive = &st
		return r.Client.Status().Patch(ctx, cluster, patch)
	})
}

// ArchiveStatus is status.binlogArchive (without ReportedAt) for an archive index, the base
// backups in the store and the archiver's last Health: the segment holding the newest archived
// transaction, its commit time, the lag, and the recoverable window (pitr.RecoverableWindow).
func ArchiveStatus(instance string, h Health, index *objectstore.Index, backups []*objectstore.Metadata) (v1alpha1.BinlogArchiveStatus, error) {
	st := v1alpha1.BinlogArchiveStatus{Instance: instance, LagSeconds: int64(h.Lag / time.Second)}
	var newest objectstore.Segment
	for _, s := range index.Segments {
		if s.LastEventTime.After(newest.LastEventTime) {
			newest = s
		}
	}
	if newest.Name != "" {
		st.LastSegment, st.LastArchivedTime = newest.Name, microTime(newest.LastEventTime)
	}
	w, ok, err := pitr.RecoverableWindow(backups, index)
	if err != nil {
		return st, fmt.Errorf("the recoverable window: %w", err)
	}
	if ok {
		st.RecoverableFrom, st.RecoverableTo, st.FirstRecoverableBackup = microTime(w.From), microTime(w.To), w.Base
	}
	return st, nil
}

func microTime(t time.Time) *metav1.MicroTime {
	m := metav1.NewMicroTime(t.UTC().Truncate(time.Microsecond))
	return &m
}
