// Package cluster is the Cluster reconciler: it turns a Cluster into instance PVCs and Pods,
// password Secrets, a CA and certificates, the instances' ServiceAccounts, Roles and RoleBindings,
// Services and a PodDisruptionBudget; labels the Pods from the roles the instances report; sets
// the primary's semi-sync acknowledgement count; and aggregates the instances' state into the
// Cluster status.
//
// One reconcile is gather → Decide → act. gather (gather.go) reads the Cluster, its children,
// its Secrets and the instances' reports into an Observation. Decide (decide.go) is pure: it
// returns a Decision holding everything the reconcile does, one plan function per concern
// (instances.go, primary.go, certs.go, rollout.go, routing.go, status.go, semisync.go), each
// table-tested in the _test.go file of the same name.
// act (act.go) performs the Decision in the fixed order of its steps and nothing else: it reads
// nothing to decide and decides nothing. metrics.go exports what each reconcile saw, and counts the
// failovers, switchovers and blocking episodes a Decision records once the act step that writes
// them succeeded.
//
// A new rule (a switchover or failover step, say) is a field of Observation filled by gather, a
// plan function called from Decide that fills a field of Decision and its Events (primary.go is
// where the choice of targetPrimary lives), and, when it writes something, an actStep with its
// runner in act.
package cluster
