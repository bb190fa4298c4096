// Package chaos attacks the primary of a Cluster on the local node (hack/localcluster.sh) under a
// steady write load and checks the two promises a user relies on: no acknowledged write is lost,
// and at no moment do two instances accept writes.
//
// A run creates nothing but what it checks with: a database `chaos` with one table and, since the
// Cluster's app account does not exist yet in mysqld, its own account created through the root
// account inside the primary's Pod. While it runs,
//
//   - a Writer inserts through <cluster>-rw at a steady rate, opening a fresh connection whenever
//     one breaks, and records every acknowledged insert (id, time, server_uuid of the server that
//     committed it, read in the same transaction);
//   - a Poller reads @@read_only, @@super_read_only and @@server_uuid of every instance through its
//     Pod IP every 100 ms;
//   - a Reader reads through <cluster>-ro on a fresh connection every 100 ms.
//
// Faults (fault.go) hit the current primary with the node's own tools: the API server (Pod
// deletion, switchover), containerd (container kill), kill(2) of a process of the container
// (mysqld, the instance manager), iptables in the Pod's network namespace (network cut). After
// each fault, once the Cluster is Ready again, Verify checks every acknowledged id on the primary
// and on every replica, and the GTID history of the fault. Analyse (analysis.go, pure) turns the
// records into a Report.
//
// Every address the checker dials is inside the node's network namespace (Pod and Service IPs),
// reached by sockets created in that namespace (netns.go); the API server is reached at the
// node's address, as kubectl does.
package chaos
