package backupjob

import (
	"time"

	"github.com/spf13/pflag"
)

// VerifyArgs are the flags a verification Job passes to `manager verify`. Every secret is a file
// path (a mounted Secret), never a value.
type VerifyArgs struct {
	// Cluster, BackupName and BackupID locate the backup in the store (its directory).
	Cluster, BackupName, BackupID string
	// Archive is the directory whose binlog archive is replayed onto the backup; empty for none.
	Archive string
	// ScratchDir is the empty scratch volume the backup is restored into.
	ScratchDir string
	// MysqldArgs are the options the restored data needs to start (innodb_page_size, …).
	MysqldArgs []string
	// CheckBudget bounds CHECK TABLE and the row counts.
	CheckBudget time.Duration
	// TerminationLog is where the VerifyResult is written.
	TerminationLog string
	Store          Store
}

// Bind declares the flags on fs, into a, with the command's defaults.
func (a *VerifyArgs) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&a.Cluster, "cluster", "", "the backup's directory in the object store: the Cluster's location")
	fs.StringVar(&a.BackupName, "backup-name", "", "Backup name")
	fs.StringVar(&a.BackupID, "backup-id", "", "backup id")
	fs.StringVar(&a.Archive, "archive", "", "directory whose binlog archive is replayed onto the backup (empty: none)")
	fs.StringVar(&a.ScratchDir, "scratch-dir", "/scratch", "empty directory the backup is restored into")
	fs.StringArrayVar(&a.MysqldArgs, "mysqld-arg", nil, "mysqld option the restored data needs (repeatable)")
	fs.DurationVar(&a.CheckBudget, "check-budget", 10*time.Minute, "time for CHECK TABLE and the row counts")
	fs.StringVar(&a.TerminationLog, "termination-log", DefaultTerminationLog, "where the result is written")
	a.Store.Bind(fs)
}

// Flags renders a as the arguments of the Job's container (Args.Flags).
func (a VerifyArgs) Flags() []string { return flagsOf(a, (*VerifyArgs).Bind) }
