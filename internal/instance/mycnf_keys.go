package instance

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// ownedKeys are the my.cnf options the operator sets or forbids, in canonical form (lower case,
// underscores). A user parameter naming one of them, an alias, or an abbreviation of one is
// refused: these decide identity, durability, replication safety and security.
var ownedKeys = map[string]string{
	"server_id":                      "identity: derived from the instance serial",
	"datadir":                        "storage layout",
	"socket":                         "storage layout",
	"pid_file":                       "storage layout",
	"log_error":                      "storage layout",
	"port":                           "networking is managed",
	"bind_address":                   "networking is managed",
	"admin_address":                  "networking is managed: the operator fences through the administrative interface",
	"admin_port":                     "networking is managed: the operator fences through the administrative interface",
	"admin_ssl":                      "TLS of the administrative interface is the operator's",
	"admin_ssl_ca":                   "TLS of the administrative interface is the operator's",
	"admin_ssl_capath":               "TLS of the administrative interface is the operator's",
	"admin_ssl_cert":                 "TLS of the administrative interface is the operator's",
	"admin_ssl_key":                  "TLS of the administrative interface is the operator's",
	"admin_ssl_crl":                  "TLS of the administrative interface is the operator's",
	"admin_ssl_crlpath":              "TLS of the administrative interface is the operator's",
	"admin_ssl_cipher":               "TLS of the administrative interface is the operator's",
	"admin_tls_version":              "TLS of the administrative interface is the operator's",
	"admin_tls_ciphersuites":         "TLS of the administrative interface is the operator's",
	"skip_networking":                "networking is managed",
	"report_host":                    "identity: replicas find the instance by it",
	"report_port":                    "identity: replicas find the instance by it",
	"user":                           "the process user is managed",
	"gtid_mode":                      "replication: GTIDs are required",
	"enforce_gtid_consistency":       "replication: GTIDs are required",
	"log_bin":                        "replication: the binary log is required",
	"binlog_format":                  "replication: row-based binary log is required",
	"log_replica_updates":            "replication: every instance must be able to become a source",
	"log_slave_updates":              "replication: every instance must be able to become a source",
	"relay_log":                      "replication: relay log layout",
	"relay_log_recovery":             "replication: OFF keeps the acknowledged tail of a replica's relay log across a restart",
	"skip_replica_start":             "replication: the instance manager decides when to replicate",
	"skip_slave_start":               "replication: the instance manager decides when to replicate",
	"sync_binlog":                    "durability: acknowledged writes must survive a crash",
	"innodb_flush_log_at_trx_commit": "durability: acknowledged writes must survive a crash",
	"read_only":                      "roles: every instance starts read-only",
	"super_read_only":                "roles: every instance starts read-only",
	"ssl_ca":                         "TLS material is mounted by the operator",
	"ssl_cert":                       "TLS material is mounted by the operator",
	"ssl_key":                        "TLS material is mounted by the operator",
	"plugin_load":                    "plugins are managed",
	"plugin_load_add":                "plugins are managed",
	"skip_grant_tables":              "security: authentication cannot be turned off",
	"skip_name_resolve":              "security: root@localhost must match the local socket only",
	"rpl_semi_sync_source_enabled":   "semi-sync is applied at runtime from the spec",
	"rpl_semi_sync_replica_enabled":  "semi-sync is applied at runtime from the spec",
	"rpl_semi_sync_source_timeout":   "semi-sync is applied at runtime from the spec",
	"rpl_semi_sync_source_wait_for_replica_count": "semi-sync is applied at runtime from the spec",
	"rpl_semi_sync_source_wait_point":             "semi-sync durability: AFTER_SYNC, applied at runtime",
	"rpl_semi_sync_source_wait_no_replica":        "semi-sync durability: commits wait without replicas, applied at runtime",
	"replicate_do_db":                             replicationFilter,
	"replicate_ignore_db":                         replicationFilter,
	"replicate_do_table":                          replicationFilter,
	"replicate_ignore_table":                      replicationFilter,
	"replicate_wild_do_table":                     replicationFilter,
	"replicate_wild_ignore_table":                 replicationFilter,
	"replicate_rewrite_db":                        replicationFilter,
	"replicate_same_server_id":                    replicationFilter,
	"binlog_do_db":                                replicationFilter,
	"binlog_ignore_db":                            replicationFilter,
	"replica_skip_errors":                         "replication: a skipped error leaves a replica silently different from its primary",
	"sql_replica_skip_counter":                    "replication: a skipped transaction leaves a replica silently different from its primary",
	"sql_slave_skip_counter":                      "replication: a skipped transaction leaves a replica silently different from its primary",
	"gtid_purged":                                 "replication: the GTID history is the server's, changed only by its binary logs",
	"slave_skip_errors":                           "replication: a skipped error leaves a replica silently different from its primary",
	"replica_exec_mode":                           "replication: IDEMPOTENT ignores the errors that reveal a replica different from its primary",
	"slave_exec_mode":                             "replication: IDEMPOTENT ignores the errors that reveal a replica different from its primary",
	"persisted_globals_load":                      "OFF: a SET PERSIST (mysqld-auto.cnf) must not override the operator's settings at the next start",
	"mysqlx":                                      "OFF: the X Protocol port is not managed (no Service, no TLS policy of the operator's)",
}

// replicationFilter is why replication filters are the operator's: a filtered replica lacks
// writes its primary acknowledged, and a promotion of it loses them.
const replicationFilter = "replication: a filter makes a replica lack writes its primary acknowledged, which a promotion would lose"

// optionPrefixes change how mysqld reads an option; they are stripped before the ownership check
// so that "loose-sync-binlog" or "skip-log-bin" cannot get around it.
var optionPrefixes = []string{"loose_", "skip_", "disable_", "enable_", "maximum_"}

var validKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// canonicalKey writes an option name the way mysqld compares them: case-insensitive, with dashes
// and underscores equivalent.
func canonicalKey(key string) string { return specs.CanonicalParameterKey(key) }

// ownedReason returns why key is the operator's, or "" when the user may set it.
func ownedReason(key string) string {
	k := canonicalKey(key)
	for {
		if reason := ownedOrAbbreviation(k); reason != "" {
			return reason
		}
		stripped := false
		for _, p := range optionPrefixes {
			if rest, ok := strings.CutPrefix(k, p); ok && rest != "" {
				k, stripped = rest, true
				break
			}
		}
		if !stripped {
			return ""
		}
	}
}

// ownedOrAbbreviation matches an owned key, or an unambiguous-looking prefix of one (older
// mysqld versions accept abbreviated option names).
func ownedOrAbbreviation(k string) string {
	if reason, ok := ownedKeys[k]; ok {
		return reason
	}
	for _, owned := range sortedOwnedKeys {
		if strings.HasPrefix(owned, k) {
			return ownedKeys[owned] + " (abbreviation of " + owned + ")"
		}
	}
	return ""
}

// sortedOwnedKeys makes the reason given for an abbreviation independent of map order.
var sortedOwnedKeys = slices.Sorted(maps.Keys(ownedKeys))
