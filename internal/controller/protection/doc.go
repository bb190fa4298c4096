// Package protection reports how well each Cluster is protected by its backups: the last
// successful and failed Backups, what its object store location holds, the first recoverable
// point and the next scheduled backup (status.backups), and the BackupsHealthy condition with
// its two levels: LastBackupFailed at the first failure, NoSuccessfulBackup (critical) once no
// backup has succeeded for spec.backup.failureAlertAfter, whatever the cause. The same facts are
// exported as metrics.
//
// Decide (decide.go) is pure; the reconciler gathers, decides and acts.
package protection
