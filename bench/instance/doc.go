// Command instance benchmarks `manager instance run` with real mysqld processes against a real API
// server: the time from nothing to three ready instances, and a replica's bootstrap by clone of a
// primary holding -size-mb of data, as MB/s next to a raw copy (cp -a) of a data directory of the
// same size in the same run. It prints figures; it is not part of the tests. Run it as root (mysqld
// runs chrooted into the MySQL root filesystem) from the repository root:
//
//	go run ./bench/instance -size-mb 1024
package main
