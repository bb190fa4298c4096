// Package backup is the Backup reconciler: it runs each Backup once (it resolves the Cluster and
// its object store, chooses the instance, creates a Job owned by the Backup running
// `manager backup`, follows it, and ends the Backup completed or failed), and keeps the
// remote-cleanup finalizer that deletes a deleted Backup's directory in the object store when
// its deletion policy says so. What the Job is given and reports is internal/backupjob's
// contract.
//
// Both follow gather -> decide -> act: gather.go and decide.go (Observation, Decision, Decide)
// for the Backup's phase, finalizer_gather.go and finalizer_decide.go for the finalizer; act.go
// and finalizer_act.go write.
package backup
