package restore

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	cmdbackup "github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// Options are the flags of `manager restore`.
type Options struct {
	Ref        objectstore.BackupRef
	DataDir    string
	RunDir     string
	Mysqld     localmysqld.Command
	MysqldArgs []string
	Store      backupjob.Store
}

// NewCommand returns `manager restore`.
func NewCommand() *cobra.Command {
	o := &Options{}
	var mysqld string
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Restore a data directory from a backup in the object store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Mysqld = localmysqld.Command{Argv: []string{mysqld}}
			_, err := Run(cmd.Context(), o)
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Ref.Cluster, "cluster", "", "Cluster the backup was taken of")
	fs.StringVar(&o.Ref.Name, "backup-name", "", "Backup name")
	fs.StringVar(&o.Ref.ID, "backup-id", "", "backup id")
	fs.StringVar(&o.DataDir, "data-dir", specs.DataDir, "data directory to restore into: absent or empty")
	fs.StringVar(&o.RunDir, "run-dir", "", "scratch directory for the verification server (default: beside the data directory)")
	fs.StringVar(&mysqld, "mysqld", localmysqld.DefaultMysqld, "mysqld binary")
	fs.StringArrayVar(&o.MysqldArgs, "mysqld-arg", nil, "extra mysqld option of the verification start (repeatable)")
	o.Store.Bind(fs)
	return cmd
}

// Run restores and logs the outcome.
func Run(ctx context.Context, o *Options) (*objectstore.Metadata, error) {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("cluster", o.Ref.Cluster, "backup", o.Ref.Name, "backupId", o.Ref.ID)
	if err := o.Ref.Validate(); err != nil {
		return nil, err
	}
	store, err := cmdbackup.OpenStore(o.Store)
	if err != nil {
		return nil, err
	}
	runDir := o.RunDir
	if runDir == "" {
		runDir = filepath.Join(filepath.Dir(filepath.Clean(o.DataDir)), ".restore-run")
	}
	log.Info("restore starting", "dataDir", o.DataDir)
	md, err := restore.Restore(ctx, restore.Config{Store: store, Ref: o.Ref, DataDir: o.DataDir,
		RunDir: runDir, Mysqld: o.Mysqld, MysqldArgs: o.MysqldArgs})
	if err != nil {
		log.Error("restore failed", "error", err)
		return nil, err
	}
	_ = os.RemoveAll(runDir)
	log.Info("restore completed", "checksum", md.Checksum(), "size", md.Size, "gtidExecuted", md.GTIDExecuted)
	return md, nil
}
