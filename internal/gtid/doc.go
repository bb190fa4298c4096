// Package gtid parses MySQL GTID sets and answers the questions replication safety depends on:
// is one instance's history contained in another's (a replica may follow the primary), which
// transactions exist only on a replica (errant transactions that make it diverged), and which
// failover candidate holds the most complete history.
//
// Parsing and containment use go-mysql's MysqlGTIDSet (tags included, as MySQL 8.4+ prints
// them); this package adds the checks go-mysql leaves out (transaction number 0 is rejected, as
// MySQL rejects it), set difference, and candidate comparison. A Set is a value: no method
// modifies its receiver or its arguments.
package gtid
