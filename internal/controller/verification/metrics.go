package verification

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// The verification figures per Cluster, as metrics on the operator's endpoint.
var (
	labels        = []string{"namespace", "cluster"}
	lastPassedMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backup_verification_last_passed",
		Help: "1 when the Cluster's last restore verification passed, 0 when it failed; absent before the first."}, labels)
	lastEndMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backup_verification_last_timestamp_seconds",
		Help: "When the Cluster's last restore verification ended (Unix seconds)."}, labels)
	lastSuccessMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backup_verification_last_success_timestamp_seconds",
		Help: "When a restore verification of the Cluster last passed (Unix seconds)."}, labels)
	resultsMet = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cnm_backup_verifications_total",
		Help: "Restore verifications ended, by result (passed, failed) and reason."}, append(labels, "result", "reason"))
	durationMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_backup_verification_duration_seconds",
		Help: "How long the Cluster's last restore verification Job ran."}, labels)
)

func init() {
	metrics.Registry.MustRegister(lastPassedMet, lastEndMet, lastSuccessMet, resultsMet, durationMet)
}

// count counts an outcome and sets the duration of the Cluster's last verification.
func count(namespace, cluster string, o Outcome) {
	l := prometheus.Labels{"namespace": namespace, "cluster": cluster}
	result := "failed"
	if o.Status.Passed {
		result = "passed"
	}
	resultsMet.With(prometheus.Labels{"namespace": namespace, "cluster": cluster, "result": result, "reason": o.Status.Reason}).Inc()
	if s, e := o.Status.StartedAt, o.Status.CompletedAt; s != nil && e != nil {
		durationMet.With(l).Set(e.Sub(s.Time).Seconds())
	}
}

// export sets the gauges of the Cluster's last verification; nil clears them.
func export(namespace, cluster string, last *v1.LastVerifiedBackup) {
	l := prometheus.Labels{"namespace": namespace, "cluster": cluster}
	if last == nil {
		lastPassedMet.Delete(l)
		lastEndMet.Delete(l)
		lastSuccessMet.Delete(l)
		durationMet.Delete(l)
		return
	}
	passed := 0.0
	if last.Passed {
		passed = 1
	}
	lastPassedMet.With(l).Set(passed)
	if last.CompletedAt != nil {
		lastEndMet.With(l).Set(float64(last.CompletedAt.Unix()))
	}
	if last.LastPassedAt != nil {
		lastSuccessMet.With(l).Set(float64(last.LastPassedAt.Unix()))
	}
}
