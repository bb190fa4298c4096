package backup

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// The Backups of each Cluster, as metrics on the operator's endpoint.
var (
	metricLabels = []string{"namespace", "cluster"}
	backupsMet   = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cnm_backups_total",
		Help: "Backups of the Cluster that finished, by result (completed, failed); each counted once, when the operator records its end."},
		append(metricLabels, "result"))
	durationMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backup_duration_seconds",
		Help: "How long the Cluster's last finished Backup ran (status.startedAt to status.completedAt)."}, metricLabels)
	bytesMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backup_bytes",
		Help: "Size of the archive of the Cluster's last completed Backup (status.size)."}, metricLabels)
)

// Results of cnm_backups_total.
const (
	resultCompleted = "completed"
	resultFailed    = "failed"
)

func init() {
	metrics.Registry.MustRegister(backupsMet, durationMet, bytesMet)
}

// lastShown is, per Cluster, when the Backups the gauges show ended: a Backup that ended earlier
// (read after a newer one, at startup say) does not replace them.
var lastShown = struct {
	sync.Mutex
	finished, completed map[types.NamespacedName]time.Time
}{finished: map[types.NamespacedName]time.Time{}, completed: map[types.NamespacedName]time.Time{}}

// clusterKey is the Cluster b belongs to.
func clusterKey(b *v1.Backup) types.NamespacedName {
	return types.NamespacedName{Namespace: b.Namespace, Name: b.Spec.Cluster.Name}
}

// countFinished counts the end of a Backup the operator has just recorded, old being the Backup
// as it was read and b as written: the write is the transition, read back by every later
// reconcile and by the next process, so each Backup is counted once. A Superseded Backup never
// ran and is not counted.
func countFinished(old, b *v1.Backup) {
	if old.IsDone() {
		return
	}
	result := resultOf(b)
	if result == "" {
		return
	}
	k := clusterKey(b)
	backupsMet.WithLabelValues(k.Namespace, k.Name, result).Inc()
	exportFinished(b)
}

// resultOf is b's result label, "" when it did not finish by completing or failing.
func resultOf(b *v1.Backup) string {
	switch b.Status.Phase {
	case v1.BackupPhaseCompleted:
		return resultCompleted
	case v1.BackupPhaseFailed:
		return resultFailed
	}
	return ""
}

// exportCounters makes the counters of b's Cluster exist, at 0 before its first Backup ends, so
// that increase() sees that end.
func exportCounters(b *v1.Backup) {
	k := clusterKey(b)
	backupsMet.WithLabelValues(k.Namespace, k.Name, resultCompleted)
	backupsMet.WithLabelValues(k.Namespace, k.Name, resultFailed)
}

// exportFinished shows a finished Backup in the gauges of its Cluster unless a Backup that ended
// later is shown already: every finished Backup is reconciled when the operator starts, so the
// gauges show the Cluster's last one again.
func exportFinished(b *v1.Backup) {
	result, end := resultOf(b), b.Status.CompletedAt
	if result == "" || end == nil {
		return
	}
	k := clusterKey(b)
	l := prometheus.Labels{"namespace": k.Namespace, "cluster": k.Name}
	lastShown.Lock()
	defer lastShown.Unlock()
	if s := b.Status.StartedAt; s != nil && !end.Time.Before(lastShown.finished[k]) {
		lastShown.finished[k] = end.Time
		durationMet.With(l).Set(max(end.Sub(s.Time), 0).Seconds())
	}
	if result == resultCompleted && !end.Time.Before(lastShown.completed[k]) {
		lastShown.completed[k] = end.Time
		bytesMet.With(l).Set(float64(b.Status.Size))
	}
}

// forgetCluster removes the series of a Cluster that is gone.
func forgetCluster(k types.NamespacedName) {
	l := prometheus.Labels{"namespace": k.Namespace, "cluster": k.Name}
	backupsMet.DeletePartialMatch(l)
	durationMet.Delete(l)
	bytesMet.Delete(l)
	lastShown.Lock()
	defer lastShown.Unlock()
	delete(lastShown.finished, k)
	delete(lastShown.completed, k)
}

// export makes the series of b's Cluster exist and shows b in its gauges once finished, while the
// Cluster exists (read from the cache): a Backup left by a Cluster deleted while the operator was
// down shows nothing.
func (r *Reconciler) export(ctx context.Context, b *v1.Backup) {
	if b.DeletionTimestamp != nil {
		return
	}
	if err := r.Client.Get(ctx, clusterKey(b), &v1.Cluster{}); err != nil {
		return
	}
	exportCounters(b)
	exportFinished(b)
}

// forgetDeletedClusters removes the series of each Cluster the operator sees deleted.
func forgetDeletedClusters() handler.EventHandler {
	return handler.Funcs{DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		forgetCluster(types.NamespacedName{Namespace: e.Object.GetNamespace(), Name: e.Object.GetName()})
	}}
}
