package main

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Legends: a cluster, and an instance (the Pod is named after its cluster).
const (
	byCluster  = "{{namespace}}/{{cluster}}"
	byInstance = "{{namespace}}/{{pod}}"
)

// onPrimary keeps an instance series only on the instance that reports itself primary.
func onPrimary(metric string) string {
	return sel(metric) + ` and on (namespace, pod) (` + sel("cnm_instance_primary") + ` == 1)`
}

func overview() row {
	return row{title: "Overview", panels: []cog.Builder[dashboard.Panel]{
		statPanel("Instances up",
			"Instances whose manager's last status query of mysqld succeeded, and the instances the Cluster wants (spec.instances).", "none",
			q(`sum by (namespace, cluster) (`+sel("cnm_instance_up")+`)`, byCluster+" up"),
			q(`max by (namespace, cluster) (`+sel("cnm_cluster_instances")+`)`, byCluster+" wanted")),
		statPanel("Ready instances",
			"Ready instances the operator saw last.", "none",
			q(`max by (namespace, cluster) (`+sel("cnm_cluster_ready_instances")+`)`, byCluster)),
		statPanel("Primaries",
			"Instances that report the primary role: anything but 1 needs a look (0 during a failover).", "none",
			q(`sum by (namespace, cluster) (`+sel("cnm_instance_primary")+`)`, byCluster)).
			Thresholds(steps("red", 1.0, "green", 2.0, "red")),
		statPanel("Primary known to the operator",
			"Whether the operator knows a current primary.", "none",
			q(`max by (namespace, cluster) (`+sel("cnm_cluster_primary_known")+`)`, byCluster)).
			Mappings(boolean("yes", "green", "no", "red")),
		statPanel("Fenced, diverged, isolated",
			"Instances fenced, diverged (errant transactions) or cut off from the API server, as the instances report it.", "none",
			q(`sum by (namespace, cluster) (`+sel("cnm_instance_fenced")+`)`, byCluster+" fenced"),
			q(`sum by (namespace, cluster) (`+sel("cnm_instance_diverged")+`)`, byCluster+" diverged"),
			q(`sum by (namespace, cluster) (`+sel("cnm_instance_isolated")+`)`, byCluster+" isolated")).
			Thresholds(steps("green", 1.0, "red")),
		statPanel("Certificates expire in",
			"Time left before the earliest notAfter of the server and client certificates the instances use.", "s",
			q(`min by (namespace, cluster, certificate) (`+sel("cnm_certificate_expiry_timestamp_seconds")+`) - time()`, byCluster+" {{certificate}}")).
			Thresholds(steps("red", 604800.0, "orange", 2592000.0, "green")),
		seriesPanel("Writable instances: instances and operator",
			"Writable instances as the instances report them (up, read_only and super_read_only off) and as the operator last saw them. More than one writable instance is a split brain; the two lines disagreeing for long means the operator's view is stale.", "none", 6,
			q(`sum by (namespace, cluster) (`+sel("cnm_instance_writable")+`)`, byCluster+" reported by the instances"),
			q(`max by (namespace, cluster) (`+sel("cnm_cluster_writable_instances_seen")+`)`, byCluster+" seen by the operator")),
		seriesPanel("Fenced and diverged instances",
			"Fenced and diverged instances as the instances report them and as the operator records them.", "none", 6,
			q(`sum by (namespace, cluster) (`+sel("cnm_instance_fenced")+`)`, byCluster+" fenced (instances)"),
			q(`max by (namespace, cluster) (`+sel("cnm_cluster_fenced_instances")+`)`, byCluster+" fenced (operator)"),
			q(`sum by (namespace, cluster) (`+sel("cnm_instance_diverged")+`)`, byCluster+" diverged (instances)"),
			q(`max by (namespace, cluster) (`+sel("cnm_cluster_diverged_instances")+`)`, byCluster+" diverged (operator)")),
		seriesPanel("Primary Lease held",
			"1 on the instance holding the primary Lease; it should be the instance that reports the primary role.", "none", 6,
			q(sel("cnm_lease_held"), byInstance+" Lease"),
			q(sel("cnm_instance_primary"), byInstance+" primary role")),
		seriesPanel("Lease renew age",
			"Seconds since the holder last renewed the primary Lease: a rising line means the holder is about to fence itself.", "s", 6,
			q(sel("cnm_lease_renew_age_seconds"), byInstance)),
	}}
}

func replication() row {
	return row{title: "Replication and semi-sync", panels: []cog.Builder[dashboard.Panel]{
		seriesPanel("Replication threads",
			"IO and SQL threads of each replica's channel (1 running), and whether either reports an error.", "none", 8,
			q(sel("cnm_replication_io_running"), byInstance+" IO running"),
			q(sel("cnm_replication_sql_running"), byInstance+" SQL running"),
			q(sel("cnm_replication_last_error"), byInstance+" error")),
		seriesPanel("Replication lag",
			"Seconds each replica is behind its source.", "s", 8,
			q(sel("cnm_replication_lag_seconds"), byInstance)),
		seriesPanel("Replication lag in transactions",
			"Transactions each replica received and has not applied yet.", "none", 8,
			q(sel("cnm_replication_lag_transactions"), byInstance)),
		seriesPanel("Semi-sync on the primary",
			"Semi-sync enabled, acknowledging in force (on), and fallen back to asynchronous replication, on the primary. A fallback means commits no longer wait for a replica.", "none", 6,
			q(onPrimary("cnm_semisync_source_enabled"), byInstance+" enabled"),
			q(onPrimary("cnm_semisync_source_on"), byInstance+" on"),
			q(onPrimary("cnm_semisync_fallen_back"), byInstance+" fallen back")),
		seriesPanel("Acknowledging replicas",
			"Replicas connected to the primary as semi-sync acknowledgers.", "none", 6,
			q(onPrimary("cnm_semisync_acknowledging_replicas"), byInstance)),
		seriesPanel("Sessions waiting for an acknowledgement",
			"Sessions whose commit waits for a replica's acknowledgement.", "none", 6,
			q(sel("cnm_semisync_waiting_sessions"), byInstance)),
		seriesPanel("Longest acknowledgement wait",
			"Longest wait of a session currently waiting for an acknowledgement (0 when none waits).", "s", 6,
			q(sel("cnm_semisync_longest_wait_seconds"), byInstance)),
	}}
}

func failovers() row {
	// bucket is a quantile of the durations of the failovers and switchovers completed in window.
	bucket := func(phi, window string) string {
		return `histogram_quantile(` + phi + `, sum by (namespace, cluster, kind, le) (increase(` +
			sel("cnm_failover_duration_seconds_bucket") + `[` + window + `])))`
	}
	return row{title: "Failovers", panels: []cog.Builder[dashboard.Panel]{
		statPanel("Failovers",
			"Failovers completed over the dashboard's time range.", "none",
			q(`sum by (namespace, cluster) (increase(`+sel("cnm_failovers_total")+`[$__range]))`, byCluster)),
		statPanel("Switchovers",
			"Switchovers completed over the dashboard's time range.", "none",
			q(`sum by (namespace, cluster) (increase(`+sel("cnm_switchovers_total")+`[$__range]))`, byCluster)),
		statPanel("Failover duration p90",
			"90th percentile of the time from a failure detected (or a switchover asked) to the new primary serving, over the dashboard's time range.", "s",
			q(bucket("0.9", "$__range"), byCluster+" {{kind}}")),
		statPanel("Mean failover duration",
			"Mean time from a failure detected (or a switchover asked) to the new primary serving, over the dashboard's time range.", "s",
			q(`sum by (namespace, cluster, kind) (increase(`+sel("cnm_failover_duration_seconds_sum")+`[$__range])) / sum by (namespace, cluster, kind) (increase(`+sel("cnm_failover_duration_seconds_count")+`[$__range]))`, byCluster+" {{kind}}")),
		statPanel("Blocked failover decisions",
			"Failover decisions the operator refused to carry out over the dashboard's time range (see the reasons below).", "none",
			q(`sum by (namespace, cluster) (increase(`+sel("cnm_failovers_blocked_total")+`[$__range]))`, byCluster)).
			Thresholds(steps("green", 1.0, "orange")),
		statPanel("Self-fences",
			"Times instances fenced themselves (Lease lost or cut off from the API server) over the dashboard's time range.", "none",
			q(`sum by (namespace, cluster) (increase(`+sel("cnm_self_fences_total")+`[$__range]))`, byCluster)).
			Thresholds(steps("green", 1.0, "orange")),
		seriesPanel("Failovers and switchovers per hour",
			"Failovers and switchovers completed in each hour.", "none", 8,
			q(`sum by (namespace, cluster) (increase(`+sel("cnm_failovers_total")+`[1h]))`, byCluster+" failovers"),
			q(`sum by (namespace, cluster) (increase(`+sel("cnm_switchovers_total")+`[1h]))`, byCluster+" switchovers")),
		seriesPanel("Failover duration quantiles",
			"50th, 90th and 99th percentiles of failover and switchover durations over the hour before each point.", "s", 8,
			q(bucket("0.5", "1h"), byCluster+" {{kind}} p50"),
			q(bucket("0.9", "1h"), byCluster+" {{kind}} p90"),
			q(bucket("0.99", "1h"), byCluster+" {{kind}} p99")),
		seriesPanel("Blocked failover decisions per hour, by reason",
			"Why the operator did not fail over: each reason names the rule that blocked it.", "none", 8,
			q(`sum by (namespace, cluster, reason) (increase(`+sel("cnm_failovers_blocked_total")+`[1h]))`, byCluster+" {{reason}}")),
	}}
}
