package binlogarchive

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the archiver's Prometheus collectors.
type Metrics struct {
	Lag           prometheus.Gauge
	Backlog       prometheus.Gauge
	LastSegment   prometheus.Gauge
	Segments      prometheus.Counter
	Failures      *prometheus.CounterVec
	Fork          prometheus.Gauge
	StandingDown  prometheus.Gauge
	ArchivedBytes prometheus.Counter
}

// NewMetrics creates the collectors and registers them with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Lag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cnm_binlog_archive_lag_seconds",
			Help: "Age of the oldest transaction of the primary not yet archived (0 when all are)."}),
		Backlog: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cnm_binlog_archive_backlog_binlogs",
			Help: "Local binary logs holding transactions not yet archived, the open one included."}),
		LastSegment: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cnm_binlog_archive_last_segment_timestamp_seconds",
			Help: "Commit time of the last transaction of the last segment this instance archived."}),
		Segments: prometheus.NewCounter(prometheus.CounterOpts{Name: "cnm_binlog_archive_segments_total",
			Help: "Binlog segments this instance archived."}),
		ArchivedBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "cnm_binlog_archive_bytes_total",
			Help: "Bytes of binlog segments this instance archived."}),
		Failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cnm_binlog_archive_failures_total",
			Help: "Archiver passes that failed, by stage."}, []string{"stage"}),
		Fork: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cnm_binlog_archive_fork",
			Help: "1 while the archive holds transactions this server never executed (archiving refused)."}),
		StandingDown: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cnm_binlog_archive_standing_down",
			Help: "1 while this instance does not archive (not the primary, fenced, demoted, no Lease)."}),
	}
	for _, stage := range failureStages {
		m.Failures.WithLabelValues(stage)
	}
	if reg != nil {
		reg.MustRegister(m.Lag, m.Backlog, m.LastSegment, m.Segments, m.ArchivedBytes, m.Failures, m.Fork, m.StandingDown)
	}
	return m
}
