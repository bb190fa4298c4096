// Command failover attacks the primary of a three-instance Cluster on the local node
// (hack/localcluster.sh) under a steady write load, fault after fault, and prints what the
// checker of test/chaos measured: acknowledged, lost and unknown writes, moments with two
// writable instances, blocked failovers, and per fault type the time from the fault to the first
// acknowledged write (p50/p99/max), the switchover write-unavailability and the -ro read
// availability. Run it as root from the repository root, with the node up:
//
//	bash hack/localcluster.sh up && bash hack/localcluster.sh images
//	go run ./bench/failover -faults 50 -durability required -out /tmp/failover-required.json
//
// It installs the operator from config/default (-install=false to skip), creates the Cluster in
// its own namespace and deletes the namespace at the end (-keep to leave it). The exit status is 1
// when an acknowledged write was lost, two instances were writable at once, or a check failed.
// See docs/failover-testing.md.
package main
