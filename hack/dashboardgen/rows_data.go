package main

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// perCluster is the largest value of an operator or instance series in each cluster.
func perCluster(metric string) string {
	return `max by (namespace, cluster) (` + sel(metric) + `)`
}

// age is the time since the latest timestamp a series holds in each cluster.
func age(metric string) string {
	return `time() - ` + perCluster(metric)
}

// rate is the per-second rate of an instance counter, per instance.
func rate(metric string) string {
	return `rate(` + sel(metric) + `[$__rate_interval])`
}

func backups() row {
	return row{title: "Backups and verification", panels: []cog.Builder[dashboard.Panel]{
		statPanel("Last successful backup",
			"Time since the last backup that completed. How old is too old depends on the schedule: the Backups healthy and No success (critical) panels apply the Cluster's own limits.", "s",
			q(age("cnm_backup_last_success_timestamp_seconds"), byCluster)),
		statPanel("Last failed backup",
			"Time since the last backup that failed.", "s",
			q(age("cnm_backup_last_failure_timestamp_seconds"), byCluster)),
		statPanel("Backups healthy",
			"The Cluster's BackupsHealthy condition.", "none",
			q(perCluster("cnm_backups_healthy"), byCluster)).
			Mappings(boolean("healthy", "green", "unhealthy", "red")),
		statPanel("No success (critical)",
			"1 once no backup has completed for the Cluster's failureAlertAfter.", "none",
			q(perCluster("cnm_backups_no_success_critical"), byCluster)).
			Mappings(boolean("critical", "red", "no", "green")),
		statPanel("Restorable backups",
			"Backups that can be restored: none means no recovery is possible from the object store.", "none",
			q(perCluster("cnm_backups_restorable"), byCluster)).
			Thresholds(steps("red", 1.0, "green")),
		statPanel("Restorable bytes",
			"Size of the restorable backups in the object store.", "bytes",
			q(perCluster("cnm_backups_restorable_bytes"), byCluster)),
		statPanel("Last verification passed",
			"Whether the last restore verification of a backup passed.", "none",
			q(perCluster("cnm_backup_verification_last_passed"), byCluster)).
			Mappings(boolean("passed", "green", "failed", "red")),
		statPanel("Last verification",
			"Time since the last restore verification finished, passed or not.", "s",
			q(age("cnm_backup_verification_last_timestamp_seconds"), byCluster)),
		statPanel("Last passed verification",
			"Time since a restore verification last passed: the age of the newest proof that a backup restores.", "s",
			q(age("cnm_backup_verification_last_success_timestamp_seconds"), byCluster)),
		statPanel("Verification duration",
			"Duration of the last restore verification.", "s",
			q(perCluster("cnm_backup_verification_duration_seconds"), byCluster)),
		statPanel("Last backup duration",
			"Duration of the last finished backup.", "s",
			q(perCluster("cnm_backup_duration_seconds"), byCluster)),
		statPanel("Last backup size",
			"Size of the last completed backup.", "bytes",
			q(perCluster("cnm_backup_bytes"), byCluster)),
		seriesPanel("Backups finished per hour, by result",
			"Backups that completed or failed in each hour.", "none", 8,
			q(`sum by (namespace, cluster, result) (increase(`+sel("cnm_backups_total")+`[1h]))`, byCluster+" {{result}}")),
		seriesPanel("Verifications per hour, by result and reason",
			"Restore verifications in each hour; the reason of a failed one says which step refused the backup.", "none", 8,
			q(`sum by (namespace, cluster, result, reason) (increase(`+sel("cnm_backup_verifications_total")+`[1h]))`, byCluster+" {{result}} {{reason}}")),
		seriesPanel("Retention passes per hour",
			"Retention passes in each hour by result, and whether the last one failed (1).", "none", 8,
			q(`sum by (namespace, cluster, result) (increase(`+sel("cnm_retention_runs_total")+`[1h]))`, byCluster+" {{result}}"),
			q(perCluster("cnm_retention_last_failure"), byCluster+" last pass failed")),
	}}
}

func archive() row {
	// window is the part of the recoverable window the series prove: from the newest completed
	// backup to the last archived transaction.
	window := perCluster("cnm_binlog_archive_last_segment_timestamp_seconds") + ` - ` + perCluster("cnm_backup_last_success_timestamp_seconds")
	return row{title: "Archive and recoverable window", panels: []cog.Builder[dashboard.Panel]{
		statPanel("Archive lag",
			"Age of the oldest transaction of the primary not yet archived: what a loss of the primary's volume would lose.", "s",
			q(perCluster("cnm_binlog_archive_lag_seconds"), byCluster)).
			Thresholds(steps("green", 300.0, "orange", 900.0, "red")),
		statPanel("Last archived transaction",
			"Time since the commit of the last transaction of the last archived segment: the end of the recoverable window.", "s",
			q(age("cnm_binlog_archive_last_segment_timestamp_seconds"), byCluster)),
		statPanel("Recoverable window (at least)",
			"From the newest completed backup to the last archived transaction: point-in-time recovery reaches at least this far back. Older restorable backups extend the window; the series do not carry the oldest one's time.", "s",
			q(window, byCluster)),
		statPanel("Archive backlog",
			"Local binary logs holding transactions not yet archived, the open one included.", "none",
			q(perCluster("cnm_binlog_archive_backlog_binlogs"), byCluster)),
		statPanel("Archiving instances",
			"Instances archiving (not standing down): 1 in a healthy Cluster.", "none",
			q(`count by (namespace, cluster) (`+sel("cnm_binlog_archive_standing_down")+` == 0)`, byCluster)).
			Thresholds(steps("red", 1.0, "green", 2.0, "red")),
		statPanel("Archive fork",
			"1 while the archive holds transactions the primary never executed: archiving is refused until it is resolved.", "none",
			q(perCluster("cnm_binlog_archive_fork"), byCluster)).
			Mappings(boolean("fork", "red", "no", "green")),
		seriesPanel("Archive lag per instance",
			"Archive lag reported by each instance (the archiving primary's is the one that matters).", "s", 8,
			q(sel("cnm_binlog_archive_lag_seconds"), byInstance)),
		seriesPanel("Archive backlog per instance",
			"Binary logs not yet archived, per instance.", "none", 8,
			q(sel("cnm_binlog_archive_backlog_binlogs"), byInstance)),
		seriesPanel("Archive throughput",
			"Bytes archived per second and segments per hour, per cluster.", "none", 8,
			q(`sum by (namespace, cluster) (`+rate("cnm_binlog_archive_bytes_total")+`)`, byCluster+" bytes/s"),
			q(`sum by (namespace, cluster) (increase(`+sel("cnm_binlog_archive_segments_total")+`[1h]))`, byCluster+" segments/h")),
		seriesPanel("Archive failures per hour, by stage",
			"Archiver passes that failed in each hour, by the stage that failed.", "none", 12,
			q(`sum by (namespace, cluster, stage) (increase(`+sel("cnm_binlog_archive_failures_total")+`[1h]))`, byCluster+" {{stage}}")),
		seriesPanel("Recoverable window over time",
			"The recoverable window the series prove (newest completed backup to last archived transaction) and the age of the last archived transaction.", "s", 12,
			q(window, byCluster+" window (at least)"),
			q(age("cnm_binlog_archive_last_segment_timestamp_seconds"), byCluster+" last archived transaction age")),
	}}
}

func mysqlBasics() row {
	return row{title: "MySQL", panels: []cog.Builder[dashboard.Panel]{
		seriesPanel("Connections",
			"Connected client threads and max_connections, per instance.", "none", 8,
			q(sel("cnm_mysql_threads_connected"), byInstance+" connected"),
			q(sel("cnm_mysql_max_connections"), byInstance+" max")),
		seriesPanel("New and aborted connections",
			"Connection attempts and failed ones per second, per instance.", "ops", 8,
			q(rate("cnm_mysql_connections_total"), byInstance+" connections"),
			q(rate("cnm_mysql_aborted_connects_total"), byInstance+" aborted")),
		seriesPanel("Queries",
			"Statements and slow queries per second, per instance.", "ops", 8,
			q(rate("cnm_mysql_queries_total"), byInstance+" queries"),
			q(rate("cnm_mysql_slow_queries_total"), byInstance+" slow")),
		seriesPanel("InnoDB buffer pool data",
			"Bytes of data in the InnoDB buffer pool, per instance.", "bytes", 8,
			q(sel("cnm_mysql_innodb_buffer_pool_bytes_data"), byInstance)),
		seriesPanel("InnoDB buffer pool hit ratio",
			"Share of logical reads served from the buffer pool rather than from disk.", "percentunit", 8,
			q(`1 - `+rate("cnm_mysql_innodb_buffer_pool_reads_total")+` / `+rate("cnm_mysql_innodb_buffer_pool_read_requests_total"), byInstance)),
		seriesPanel("InnoDB row lock waits",
			"Row lock waits per second, per instance.", "ops", 8,
			q(rate("cnm_mysql_innodb_row_lock_waits_total"), byInstance)),
		seriesPanel("InnoDB data written",
			"Bytes InnoDB wrote per second, per instance.", "Bps", 8,
			q(rate("cnm_mysql_innodb_data_written_bytes_total"), byInstance)),
		seriesPanel("Binlog cache spills",
			"Transactions per second whose binary log cache spilled to a temporary file (binlog_cache_size too small).", "ops", 8,
			q(rate("cnm_mysql_binlog_cache_disk_use_total"), byInstance)),
		seriesPanel("Binary logs size",
			"Total size of the local binary logs, per instance.", "bytes", 8,
			q(sel("cnm_mysql_binlog_bytes"), byInstance)),
	}}
}
