// Command scheduledbackup measures the ScheduledBackup controller against a real API server: many
// ScheduledBackups on a short cadence, their Backups failing at once (the operator's Backup
// controller finds no object store; -stand-in fails them from the benchmark process instead), one
// operator process. It reports slots that got no Backup or more than one, the
// lateness from slot to Backup creation as seen by a watch, reconciles per slot, and the operator's
// CPU seconds and peak RSS. See README.md.
package main
