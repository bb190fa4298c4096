// Command metrics measures what monitoring costs: the size and scrape time of an instance's
// /metrics and of the operator's with 1,000 ScheduledBackups, and the instance manager's CPU
// when scraped every 15 s. It prints figures; it is not part of the tests.
//
// Run it as root (mysqld runs chrooted into the MySQL root filesystem) from the repository root,
// after eval "$(bash hack/substrate.sh env)":
//
//	go run ./bench/metrics                           # everything, CPU windows of 5 minutes
//	go run ./bench/metrics -window 30s -scrapes 50   # a quick run
//	go run ./bench/metrics -parts operator -schedules 1000 -clusters 100
//
// The instance part (bench/internal/instancenode) starts the API server and one primary
// `manager instance run` with real mysqld, serving /metrics over HTTPS with its server
// certificate to the bearer token of its --metrics-token-file; writes -rows rows; scrapes it
// -scrapes times in a row, verifying the certificate against the Cluster CA, and prints the
// response size (text, and gzip as sent), the series, and the latency p50/p95/max (request to
// last byte, on one kept-alive connection, as Prometheus scrapes). It then reads the instance
// manager's own CPU time (/proc/<pid>/stat utime+stime, the manager's threads, not mysqld) over
// a -window without scrapes and a -window with a scrape every -interval, and prints both as a
// percentage of one core and their difference, against the target of less than 2 %.
//
// The operator part starts another API server and runs the operator's manager in this process
// (operator.NewManager, every controller) as its ServiceAccount with the RBAC of config/rbac
// (bench/internal/operatorauth), its metrics on HTTPS with the token reviewed by the API server.
// It creates -clusters namespaces with one Cluster each and -schedules daily ScheduledBackups
// spread over them, each with an immediate Backup (which fails at once: the Clusters have no
// object store); waits until every schedule ran and the number of series stopped changing; then
// scrapes -scrapes times with the token of a ServiceAccount bound to
// cloudnative-mysql-metrics-reader and prints the size, the series (all, with a scheduledbackup
// label, with a cluster label, and added per ScheduledBackup over an empty operator) and the
// latency.
//
// The measurements compete for the CPU: before each, the program waits (-wait-limit, polling
// every -wait-poll) while a program named -wait-for (the end-to-end suite's e2e.test) runs, and
// notes it when one runs anyway.
package main
