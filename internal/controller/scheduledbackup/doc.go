// Package scheduledbackup is the ScheduledBackup reconciler: it creates Backups on each
// ScheduledBackup's cron cadence (six fields, with seconds), exactly one per slot whatever the
// operator crashes through (deterministic names, children adopted by label), never two of one
// schedule at once, and records its progress in the ScheduledBackup's status, conditions and
// Events. It also consumes spec.skipImmediately and prunes Backup objects beyond the history
// limits, never their remote data.
//
// Reconcile gathers (gather.go), decides once (decide.go and the files of the decision's parts:
// runs.go, conditions.go, children.go) and acts (act.go). The controller's work queue is a
// controller-runtime priority queue (queue.go): at a slot many schedules share, the schedules
// whose slot is due go first, and the looks that only record what happened (a Backup's end, the
// slot of a Backup just created) go last, so the slot's Backups are created before the rest of
// its writes. The reconciler shares no state with any other controller.
package scheduledbackup
