// Package backupjob is the contract between the Backup controller and the backup Job it creates:
// the flags of `manager backup` (Args, declared once, rendered by the Job's builder in
// internal/specs and parsed by the command in internal/cmd/backup) and the Result the Job reports
// in its termination message, which the controller reads. It holds no behaviour of either side.
package backupjob
