package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	cmdbackup "github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/verify"
)

// errFailed: the backup did not verify (the result says why).
var errFailed = errors.New("the backup did not verify")

// NewCommand returns `manager verify`.
func NewCommand() *cobra.Command {
	var a backupjob.VerifyArgs
	var mysqld string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Restore a backup into scratch storage and check it (verification Job)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Run(cmd.Context(), a, localmysqld.Command{Argv: []string{mysqld}})
		},
	}
	a.Bind(cmd.Flags())
	cmd.Flags().StringVar(&mysqld, "mysqld", localmysqld.DefaultMysqld, "mysqld binary")
	return cmd
}

// Run verifies the backup a names, writes the result to the termination log, and fails when the
// backup did not verify.
func Run(ctx context.Context, a backupjob.VerifyArgs, mysqld localmysqld.Command) error {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("cluster", a.Cluster, "backup", a.BackupName, "backupId", a.BackupID)
	log.Info("verification starting", "archive", a.Archive, "checkBudget", a.CheckBudget)
	res := run(ctx, a, mysqld, log)
	if res.Passed {
		log.Info("verification passed", "gtidExecuted", res.GTIDExecuted, "transactions", res.Transactions,
			"tables", res.Tables, "tablesChecked", res.TablesChecked, "rows", res.Rows,
			"restoreMillis", res.RestoreMillis, "replayMillis", res.ReplayMillis, "checkMillis", res.CheckMillis)
	} else {
		log.Error("verification failed", "reason", res.Reason, "error", res.Message)
	}
	if err := writeResult(a.TerminationLog, res); err != nil {
		log.Error("writing the termination message failed", "error", err)
	}
	if !res.Passed {
		return fmt.Errorf("%w: %s", errFailed, res.Reason)
	}
	return nil
}

func run(ctx context.Context, a backupjob.VerifyArgs, mysqld localmysqld.Command, log *slog.Logger) backupjob.VerifyResult {
	ref := objectstore.BackupRef{Cluster: a.Cluster, Name: a.BackupName, ID: a.BackupID}
	if err := ref.Validate(); err != nil {
		return backupjob.VerifyResult{Reason: v1alpha1.ReasonVerificationFailed, Message: err.Error()}
	}
	store, err := cmdbackup.OpenStore(a.Store)
	if err != nil {
		// Not the backup's fault: the Job could not open the store (its secrets, its endpoint).
		return backupjob.VerifyResult{Reason: v1alpha1.ReasonVerificationFailed, Message: fmt.Sprintf("opening the object store: %v", err)}
	}
	return verify.Run(ctx, verify.Config{Store: store, Ref: ref, Archive: a.Archive, ScratchDir: a.ScratchDir,
		Mysqld: mysqld, MysqldArgs: a.MysqldArgs, CheckBudget: a.CheckBudget, Now: time.Now, Log: log})
}

func writeResult(path string, res backupjob.VerifyResult) error {
	if path == "" {
		return errors.New("no termination log path")
	}
	b, err := backupjob.EncodeVerifyResult(res)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
