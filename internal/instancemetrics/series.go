package instancemetrics

import (
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// Sample is one series of an instance at a scrape.
type Sample struct {
	Name   string
	Help   string
	Type   prometheus.ValueType
	Value  float64
	Labels map[string]string
}

// serverCounters maps SHOW GLOBAL STATUS variables to series: counters end in _total.
var serverCounters = []struct{ variable, name, help string }{
	{"Threads_connected", "cnm_mysql_threads_connected", "Open client connections (Threads_connected)."},
	{"Threads_running", "cnm_mysql_threads_running", "Threads not sleeping (Threads_running)."},
	{"Connections", "cnm_mysql_connections_total", "Connection attempts (Connections)."},
	{"Aborted_connects", "cnm_mysql_aborted_connects_total", "Failed connection attempts (Aborted_connects)."},
	{"Queries", "cnm_mysql_queries_total", "Statements executed (Queries)."},
	{"Slow_queries", "cnm_mysql_slow_queries_total", "Statements slower than long_query_time (Slow_queries)."},
	{"Innodb_buffer_pool_bytes_data", "cnm_mysql_innodb_buffer_pool_bytes_data", "Bytes of data in the InnoDB buffer pool."},
	{"Innodb_buffer_pool_read_requests", "cnm_mysql_innodb_buffer_pool_read_requests_total", "Logical reads of the InnoDB buffer pool."},
	{"Innodb_buffer_pool_reads", "cnm_mysql_innodb_buffer_pool_reads_total", "Logical reads InnoDB had to read from disk."},
	{"Innodb_row_lock_waits", "cnm_mysql_innodb_row_lock_waits_total", "Times a row lock had to be waited for."},
	{"Innodb_data_written", "cnm_mysql_innodb_data_written_bytes_total", "Bytes InnoDB wrote."},
	{"Binlog_cache_disk_use", "cnm_mysql_binlog_cache_disk_use_total", "Transactions whose binary log cache spilled to disk."},
	{"Uptime", "cnm_mysql_uptime_seconds", "Seconds since mysqld started."},
}

// Series are the samples of f, a pure function of it. mysqld's own figures are left out, not
// zeroed, when it did not answer: a rule reads a missing series as unknown.
func Series(f Facts) []Sample {
	var out []Sample
	gauge := func(name, help string, v float64) {
		out = append(out, Sample{Name: name, Help: help, Type: prometheus.GaugeValue, Value: v})
	}
	counter := func(name, help string, v float64) {
		out = append(out, Sample{Name: name, Help: help, Type: prometheus.CounterValue, Value: v})
	}
	st := f.Status
	gauge("cnm_instance_up", "1 when mysqld answered the instance manager's last status query.", b(st != nil))
	if f.RoleKnown {
		gauge("cnm_instance_primary", "1 when this instance is the Cluster's primary (status.currentPrimary) or promoting.", b(f.Primary))
		gauge("cnm_instance_fenced", "1 while the instance is fenced (kept read-only, out of the Services).", b(f.Fenced))
	}
	gauge("cnm_instance_diverged", "1 while the instance holds transactions its primary never had.", b(f.Diverged))
	gauge("cnm_instance_isolated", "1 while the instance manager reaches neither the API server nor a peer.", b(f.Isolated))
	gauge("cnm_lease_held", "1 while this instance holds the primary Lease.", b(f.LeaseHeld))
	if f.LeaseHeld && !f.LeaseRenewed.IsZero() {
		gauge("cnm_lease_renew_age_seconds", "Seconds since this instance last renewed the primary Lease.",
			max(0, f.Now.Sub(f.LeaseRenewed).Seconds()))
	}
	counter("cnm_self_fences_total", "Times this instance stopped writes itself because its Lease was not renewed or was taken.", float64(f.SelfFences))
	certs := make([]string, 0, len(f.Certificates))
	for name := range f.Certificates {
		certs = append(certs, name)
	}
	sort.Strings(certs)
	for _, name := range certs {
		out = append(out, Sample{Name: "cnm_certificate_expiry_timestamp_seconds", Type: prometheus.GaugeValue,
			Help:  "When a certificate the instance uses expires (Unix seconds).",
			Value: float64(f.Certificates[name].Unix()), Labels: map[string]string{"certificate": name}})
	}
	if st == nil {
		return out
	}
	gauge("cnm_instance_read_only", "@@read_only in effect.", b(st.ReadOnly))
	gauge("cnm_instance_super_read_only", "@@super_read_only in effect.", b(st.SuperReadOnly))
	gauge("cnm_instance_writable", "1 when mysqld accepts writes from ordinary clients (neither read-only flag set).", b(st.Writable()))
	gauge("cnm_gtid_executed_transactions", "Transactions in gtid_executed.", float64(st.GTIDExecuted.Count()))
	out = append(out, replicationSeries(st.Replication, st)...)
	out = append(out, semiSyncSeries(st.SemiSync, f.FallenBack, st.Writable())...)
	if s := f.Server; s != nil {
		for _, c := range serverCounters {
			v, ok := s.Status[c.variable]
			if !ok {
				continue
			}
			t := prometheus.GaugeValue
			if strings.HasSuffix(c.name, "_total") {
				t = prometheus.CounterValue
			}
			out = append(out, Sample{Name: c.name, Help: c.help, Type: t, Value: float64(v)})
		}
		gauge("cnm_mysql_max_connections", "@@max_connections.", float64(s.MaxConnections))
		gauge("cnm_mysql_binlog_bytes", "Total size of the local binary logs.", float64(s.BinlogBytes))
	}
	return out
}

// replicationSeries are a replica's channel figures; none without a channel.
func replicationSeries(r *mysql.ReplicationStatus, st *mysql.Status) []Sample {
	g := func(name, help string, v float64) Sample {
		return Sample{Name: name, Help: help, Type: prometheus.GaugeValue, Value: v}
	}
	if r == nil {
		return []Sample{g("cnm_replication_configured", "1 when a replication channel is configured (a replica).", 0)}
	}
	out := []Sample{
		g("cnm_replication_configured", "1 when a replication channel is configured (a replica).", 1),
		g("cnm_replication_io_running", "1 while the receiver (IO) thread runs and is connected.", b(r.IORunning == "Yes")),
		g("cnm_replication_sql_running", "1 while the applier (SQL) thread runs.", b(r.SQLRunning == "Yes")),
		g("cnm_replication_last_error", "1 when the receiver or applier reports an error.", b(r.LastIOErrno != 0 || r.LastSQLErrno != 0)),
		g("cnm_replication_lag_transactions", "Transactions received from the source and not applied yet.",
			float64(r.RetrievedGTIDSet.Subtract(st.GTIDExecuted).Count())),
	}
	if r.SecondsBehindSource != nil {
		out = append(out, g("cnm_replication_lag_seconds", "Seconds the applier is behind the source (absent while a thread is stopped).",
			float64(*r.SecondsBehindSource)))
	}
	return out
}

// semiSyncSeries are the semi-sync figures; the source's only where its plugin is installed.
func semiSyncSeries(s mysql.SemiSyncStatus, fallenBack, writable bool) []Sample {
	g := func(name, help string, v float64) Sample {
		return Sample{Name: name, Help: help, Type: prometheus.GaugeValue, Value: v}
	}
	if !s.SourcePluginInstalled {
		return nil
	}
	return []Sample{
		g("cnm_semisync_source_enabled", "rpl_semi_sync_source_enabled.", b(s.SourceEnabled)),
		g("cnm_semisync_source_on", "1 while commits wait for replica acknowledgements (Rpl_semi_sync_source_status).", b(s.SourceEnabled && s.SourceActive)),
		g("cnm_semisync_fallen_back", "1 on a writable primary whose semi-sync fell back to asynchronous replication.",
			b(writable && ((fallenBack && !s.SourceEnabled) || (s.SourceEnabled && !s.SourceActive)))),
		g("cnm_semisync_acknowledging_replicas", "Replicas connected as semi-sync acknowledgers (Rpl_semi_sync_source_clients).", float64(s.Clients)),
		g("cnm_semisync_waiting_sessions", "Sessions whose commit waits for an acknowledgement.", float64(s.AckWaiters)),
		g("cnm_semisync_longest_wait_seconds", "How long the oldest commit waiting for an acknowledgement has waited.", s.LongestAckWait.Seconds()),
	}
}

func b(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
