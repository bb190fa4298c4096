// Package retention is the Retention reconciler: at most once per Interval it runs the retention
// pass of each Cluster that has a retention policy, an object store and an established primary,
// and records what the pass deleted on the Cluster (status.lastRetentionRunTime, Events) and on
// the Backups whose artifacts are gone (ArtifactsAvailable=False). What to delete is decided by
// internal/retention and carried out on the store by internal/retentionpass; this package
// decides when a pass runs, what it must keep and what follows it.
package retention
