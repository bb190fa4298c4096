package protection

import (
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// The protection figures per Cluster, as metrics on the operator's endpoint.
var (
	labels         = []string{"namespace", "cluster"}
	lastSuccessMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backup_last_success_timestamp_seconds",
		Help: "When the Cluster's last successful Backup completed (Unix seconds); absent before the first."}, labels)
	healthyMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backups_healthy",
		Help: "1 while the Cluster's BackupsHealthy condition is True, else 0."}, labels)
	criticalMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backups_no_success_critical",
		Help: "1 once the Cluster has had no successful backup for spec.backup.failureAlertAfter (BackupsHealthy NoSuccessfulBackup)."}, labels)
	lastFailedMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backup_last_failure_timestamp_seconds",
		Help: "When the Cluster's last failed Backup failed (Unix seconds); absent before the first."}, labels)
	restorableMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backups_restorable",
		Help: "Complete backups in the Cluster's object store location, as last listed."}, labels)
	restorableBytesMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backups_restorable_bytes",
		Help: "Total size of the complete backups in the Cluster's location, as last listed."}, labels)
)

// allGauges are the series of a Cluster, registered together and removed together.
var allGauges = []*prometheus.GaugeVec{lastSuccessMet, healthyMet, criticalMet, lastFailedMet, restorableMet, restorableBytesMet}

func init() {
	for _, g := range allGauges {
		metrics.Registry.MustRegister(g)
	}
}

// export sets the Cluster's series from its status and condition; nil clears them.
func export(namespace, cluster string, st *v1.BackupsStatus, cond *metav1.Condition) {
	l := prometheus.Labels{"namespace": namespace, "cluster": cluster}
	if st == nil || cond == nil {
		for _, g := range allGauges {
			g.Delete(l)
		}
		return
	}
	healthyMet.With(l).Set(boolValue(cond.Status == metav1.ConditionTrue))
	criticalMet.With(l).Set(boolValue(cond.Reason == ReasonNoSuccess))
	if s := st.LastSuccessful; s != nil && s.CompletedAt != nil {
		lastSuccessMet.With(l).Set(float64(s.CompletedAt.Unix()))
	} else {
		lastSuccessMet.Delete(l)
	}
	if f := st.LastFailed; f != nil && f.At != nil {
		lastFailedMet.With(l).Set(float64(f.At.Unix()))
	} else {
		lastFailedMet.Delete(l)
	}
	if st.ListedAt != nil {
		restorableMet.With(l).Set(float64(st.Restorable))
		restorableBytesMet.With(l).Set(float64(st.RestorableBytes))
	} else {
		restorableMet.Delete(l)
		restorableBytesMet.Delete(l)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
