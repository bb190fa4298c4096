// Package verification runs the restore verifications of spec.backup.verification: when a
// Cluster's schedule slot comes, or everyBackups backups completed after the one verified last,
// it starts a verification Job (internal/specs, `manager verify`) on the newest completed
// Backup; one per Cluster at a time. When the Job ends it records the result on the Backup (the
// Verified condition and status.verification), on the Cluster (status.lastVerifiedBackup and
// the BackupsVerified condition), as Events and metrics, then deletes the Job and its scratch
// storage. A verification never changes a backup's phase or its objects.
//
// Decide is pure: gather (controller.go) reads the Cluster, its Backups and verification Jobs;
// act (act.go) writes what Decide says.
package verification
