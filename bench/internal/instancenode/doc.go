// Package instancenode runs real `manager instance run` processes, with real mysqld from the
// cached MySQL root filesystem, against a real API server, for the benchmarks: a World is the
// API server, a namespace with the Cluster "db" and the manager built from this tree; a Node is
// one instance manager with its directories, loopback address and certificates. Run as root
// (mysqld runs chrooted into the root filesystem) from the repository root.
package instancenode
