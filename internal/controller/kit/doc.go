// Package kit is what every reconciler of the operator does the same way: status and spec writes
// as merge patches under an optimistic lock, a quick retry after a lost race, the owner check on
// children found by label, and Events emitted from a typed table. Each reconciler package
// (cluster, backup, scheduledbackup, retention) uses it; none of them imports another.
package kit
