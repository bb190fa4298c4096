package monitoring

import "strings"

// The series the operator and the instance managers export, with the labels each carries: an
// instance's series get namespace, pod and cluster from the scrape, the operator's carry
// namespace and cluster themselves. A histogram is listed with its _bucket, _sum and _count series.
var contract = func() map[string][]string {
	m := map[string][]string{}
	instance := func(extra string, names ...string) {
		for _, n := range names {
			m[n] = append([]string{"namespace", "pod", "cluster"}, strings.Fields(extra)...)
		}
	}
	operator := func(extra string, names ...string) {
		for _, n := range names {
			m[n] = append([]string{"namespace", "cluster"}, strings.Fields(extra)...)
		}
	}
	instance("",
		"cnm_instance_up", "cnm_instance_primary", "cnm_instance_read_only", "cnm_instance_super_read_only",
		"cnm_instance_writable", "cnm_instance_fenced", "cnm_instance_diverged", "cnm_instance_isolated",
		"cnm_replication_configured", "cnm_replication_io_running", "cnm_replication_sql_running",
		"cnm_replication_lag_seconds", "cnm_replication_lag_transactions", "cnm_replication_last_error",
		"cnm_semisync_source_enabled", "cnm_semisync_source_on", "cnm_semisync_fallen_back",
		"cnm_semisync_acknowledging_replicas", "cnm_semisync_waiting_sessions", "cnm_semisync_longest_wait_seconds",
		"cnm_gtid_executed_transactions",
		"cnm_mysql_threads_connected", "cnm_mysql_max_connections", "cnm_mysql_connections_total",
		"cnm_mysql_aborted_connects_total", "cnm_mysql_queries_total", "cnm_mysql_slow_queries_total",
		"cnm_mysql_innodb_buffer_pool_bytes_data", "cnm_mysql_innodb_buffer_pool_read_requests_total",
		"cnm_mysql_innodb_buffer_pool_reads_total", "cnm_mysql_innodb_row_lock_waits_total",
		"cnm_mysql_innodb_data_written_bytes_total", "cnm_mysql_binlog_cache_disk_use_total", "cnm_mysql_binlog_bytes",
		"cnm_lease_held", "cnm_lease_renew_age_seconds", "cnm_self_fences_total",
		"cnm_binlog_archive_lag_seconds", "cnm_binlog_archive_backlog_binlogs",
		"cnm_binlog_archive_last_segment_timestamp_seconds", "cnm_binlog_archive_segments_total",
		"cnm_binlog_archive_bytes_total", "cnm_binlog_archive_fork", "cnm_binlog_archive_standing_down")
	instance("stage", "cnm_binlog_archive_failures_total")
	instance("certificate", "cnm_certificate_expiry_timestamp_seconds")
	operator("",
		"cnm_backup_last_success_timestamp_seconds", "cnm_backup_last_failure_timestamp_seconds",
		"cnm_backups_healthy", "cnm_backups_no_success_critical", "cnm_backups_restorable", "cnm_backups_restorable_bytes",
		"cnm_backup_verification_last_passed", "cnm_backup_verification_last_timestamp_seconds",
		"cnm_backup_verification_last_success_timestamp_seconds", "cnm_backup_verification_duration_seconds",
		"cnm_cluster_instances", "cnm_cluster_ready_instances", "cnm_cluster_primary_known",
		"cnm_cluster_writable_instances_seen", "cnm_cluster_fenced_instances", "cnm_cluster_diverged_instances",
		"cnm_failovers_total", "cnm_switchovers_total",
		"cnm_backup_duration_seconds", "cnm_backup_bytes",
		"cnm_retention_deleted_bytes_total", "cnm_retention_last_failure")
	operator("result reason", "cnm_backup_verifications_total")
	operator("reason", "cnm_failovers_blocked_total")
	operator("result", "cnm_backups_total", "cnm_retention_runs_total")
	operator("kind le", "cnm_failover_duration_seconds_bucket")
	operator("kind", "cnm_failover_duration_seconds_sum", "cnm_failover_duration_seconds_count")
	// Series that do not belong to one cluster.
	m["cnm_schedule_lateness_seconds"] = []string{"namespace", "scheduledbackup"}
	m["cnm_schedule_missed_slots_total"] = []string{"namespace", "scheduledbackup"}
	m["cnm_operator_undecodable_objects_total"] = []string{"kind", "namespace", "name"}
	m["controller_runtime_reconcile_total"] = []string{"controller", "result"}
	m["controller_runtime_reconcile_errors_total"] = []string{"controller"}
	return m
}()
