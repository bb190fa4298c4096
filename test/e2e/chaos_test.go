//go:build e2e

package e2e

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/test/chaos"
)

// The short run of the failover checker (test/chaos): seven faults of different kinds on the
// primary of a Cluster under dataDurability: required, while a writer inserts through -rw and a
// poller reads every instance's read_only every 100 ms. No acknowledged write may be lost, no two
// instances may ever be seen writable together, every replica must hold every acknowledged write
// after each fault, and writes must flow again after each (runFaults checks all of it). The
// faults: mysqld killed, the container killed through containerd, the Pod deleted (which fails
// over to a replica), the primary's network cut longer than the Lease TTL (a failover once the
// Lease expires), the instance manager frozen with SIGSTOP past the Lease TTL while mysqld runs
// (the operator fences mysqld itself over its administrative interface and deletes the Pod), and a
// planned switchover, and the primary cut from its replicas only until it falls back to
// asynchronous replication and acknowledges writes alone, then crashed as a node: the failover
// must stay blocked while the old primary is gone, and the Cluster must have a primary again once
// it comes back. The Cluster uses the default semi-sync timeoutMillis. A former primary left
// diverged by a kill (a transaction in its binary log that no replica received, never
// acknowledged) is checked to hold no acknowledged write, then recovered. The 50-fault run is
// bench/failover (docs/failover-testing.md).
func TestFailoverCheckerShortRun(t *testing.T) {
	runFaults(t, chaos.MysqldKill, chaos.ContainerKill, chaos.PodDelete, chaos.NetworkCut, chaos.ManagerFreeze, chaos.Switchover,
		chaos.ReplicaPartitionThenCrash)
}
