package binlogarchive

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// ConditionBinlogArchiving is the Cluster condition the primary's archiver keeps: True while it
// archives, False (with the reason) while archiving fails, a fork is refused or a gap is found.
const ConditionBinlogArchiving = "BinlogArchiving"

// ClusterReporter records the archiver's health on its Cluster: a condition, patched with an
// optimistic lock, and an Event. An instance standing down writes nothing: the primary's
// archiver owns the condition.
type ClusterReporter struct {
	Client   client.Client
	Cluster  types.NamespacedName
	Instance string
	Clock    clock.Clock
	// Backups lists the Cluster's complete base backups in its object store (ReportStatus).
	Backups func(ctx context.Context) ([]*objectstore.Metadata, error)
}

// Report writes h; failures are returned for the caller to log.
func (r ClusterReporter) Report(ctx context.Context, h Health) error {
	if h.StandDown != "" {
		return nil
	}
	status := metav1.ConditionTrue
	if !h.OK {
		status = metav1.ConditionFalse
	}
	message := fmt.Sprintf("%s: %s", r.Instance, h.Message)
	cluster := &v1alpha1.Cluster{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := r.Client.Get(ctx, r.Cluster, cluster); err != nil {
			return err
		}
		patch := client.MergeFromWithOptions(cluster.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if !meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: ConditionBinlogArchiving,
			Status: status, Reason: h.Reason, Message: message, ObservedGeneration: cluster.Generation}) {
			return nil
		}
		return r.Client.Status().Patch(ctx, cluster, patch)
	})
	if err != nil {
		return fmt.Errorf("recording the %s condition: %w", ConditionBinlogArchiving, err)
	}
	kind := corev1.EventTypeNormal
	if !h.OK {
		kind = corev1.EventTypeWarning
	}
	now := metav1.NewTime(r.Clock.Now())
	event := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: r.Cluster.Name + "-binlog-archive-", Namespace: r.Cluster.Namespace},
		InvolvedObject: corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Cluster",
			Name: cluster.Name, Namespace: cluster.Namespace, UID: cluster.UID, ResourceVersion: cluster.ResourceVersion},
		Reason: h.Reason, Message: message, Type: kind, FirstTimestamp: now, LastTimestamp: now, Count: 1,
		Source: corev1.EventSource{Component: "instance-manager", Host: r.Instance},
	}
	if err := r.Client.Create(ctx, event); err != nil {
		return fmt.Errorf("recording the %s Event: %w", h.Reason, err)
	}
	return nil
}
