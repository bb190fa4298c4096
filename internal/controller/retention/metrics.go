package retention

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
)

// The retention passes of each Cluster, as metrics on the operator's endpoint.
var (
	metricLabels = []string{"namespace", "cluster"}
	runsMet      = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cnm_retention_runs_total",
		Help: "Retention passes of the Cluster run by the operator, by result (success, failure)."}, append(metricLabels, "result"))
	deletedBytesMet = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cnm_retention_deleted_bytes_total",
		Help: "Bytes the Cluster's retention passes deleted from the object store: expired base backups, binlog segments, incomplete directories (a failed pass's deletions included)."},
		metricLabels)
	lastFailureMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_retention_last_failure",
		Help: "1 while the Cluster's last retention pass failed, 0 after a success or before the first pass."}, metricLabels)
)

// Results of cnm_retention_runs_total.
const (
	resultSuccess = "success"
	resultFailure = "failure"
)

func init() {
	metrics.Registry.MustRegister(runsMet, deletedBytesMet, lastFailureMet)
}

// exportCluster makes the series of a Cluster with an object store exist (counters at 0) before
// its first pass, so that rates and alerts see them; a Cluster whose object store was removed
// has none (a last failure would otherwise alert for ever).
func exportCluster(c *v1.Cluster) {
	if c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil {
		forgetCluster(types.NamespacedName{Namespace: c.Namespace, Name: c.Name})
		return
	}
	runsMet.WithLabelValues(c.Namespace, c.Name, resultSuccess)
	runsMet.WithLabelValues(c.Namespace, c.Name, resultFailure)
	deletedBytesMet.WithLabelValues(c.Namespace, c.Name)
	lastFailureMet.WithLabelValues(c.Namespace, c.Name)
}

// countPass counts a pass of c that has just ended with report and err: a pass runs once per
// reconcile that decides it due, and what it deleted stays deleted whether or not it failed.
func countPass(c *v1.Cluster, report retentionpass.Report, err error) {
	exportCluster(c)
	result, failed := resultSuccess, 0.0
	if err != nil {
		result, failed = resultFailure, 1
	}
	runsMet.WithLabelValues(c.Namespace, c.Name, result).Inc()
	deletedBytesMet.WithLabelValues(c.Namespace, c.Name).Add(float64(report.ExpiredBytes + report.SegmentBytes + report.IncompleteBytes))
	lastFailureMet.WithLabelValues(c.Namespace, c.Name).Set(failed)
}

// forgetCluster removes the series of a Cluster that is gone.
func forgetCluster(key types.NamespacedName) {
	l := prometheus.Labels{"namespace": key.Namespace, "cluster": key.Name}
	runsMet.DeletePartialMatch(l)
	deletedBytesMet.Delete(l)
	lastFailureMet.Delete(l)
}
