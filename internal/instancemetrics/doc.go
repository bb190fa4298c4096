// Package instancemetrics is what an instance manager exports to Prometheus: the figures of its
// instance (role, read-only flags, fencing, replication, semi-sync, GTIDs, the primary Lease,
// isolation, certificates) and of its mysqld (SHOW GLOBAL STATUS basics), made from one Facts
// snapshot per scrape by a pure function (Series), and the HTTPS endpoint that serves them to
// scrapers holding the Cluster's metrics token or a certificate of the Cluster's CA.
package instancemetrics
