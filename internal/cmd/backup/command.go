package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// maxMessage keeps the termination message under the kubelet's 4096-byte limit.
const maxMessage = 3500

// Options are the flags of `manager backup`: those the Job passes (backupjob.Args) and the
// binaries of the Job's image.
type Options struct {
	backupjob.Args
	Mysqld     localmysqld.Command
	Xtrabackup string
}

// NewCommand returns `manager backup`.
func NewCommand() *cobra.Command {
	o := &Options{}
	var mysqld string
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Take a physical backup and stream it to the object store (backup Job)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Mysqld = localmysqld.Command{Argv: []string{mysqld}}
			return Run(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	o.Args.Bind(fs)
	fs.StringVar(&mysqld, "mysqld", localmysqld.DefaultMysqld, "mysqld binary of the clone recipient")
	fs.StringVar(&o.Xtrabackup, "xtrabackup", backup.DefaultXtrabackup, "xtrabackup binary")
	return cmd
}

// Run takes the backup and writes the termination message; its error is the backup's.
func Run(ctx context.Context, o *Options) error {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("cluster", o.Cluster, "backup", o.BackupName, "backupId", o.BackupID)
	log.Info("backup starting", "method", o.Method, "target", o.TargetHost)
	md, err := run(ctx, o)
	res := backupjob.Result{BackupID: o.BackupID}
	if err != nil {
		res.Error = truncate(err.Error())
		log.Error("backup failed", "error", err)
	} else {
		res.Checksum, res.Size, res.GTIDExecuted = md.Checksum(), md.Size, md.GTIDExecuted
		log.Info("backup completed", "checksum", res.Checksum, "size", res.Size, "gtidExecuted", res.GTIDExecuted)
	}
	if werr := writeResult(o.TerminationLog, res); werr != nil {
		log.Error("writing the termination message failed", "error", werr)
	}
	return err
}

func run(ctx context.Context, o *Options) (*objectstore.Metadata, error) {
	ref := objectstore.BackupRef{Cluster: o.Cluster, Name: o.BackupName, ID: o.BackupID}
	if err := ref.Validate(); err != nil {
		return nil, err
	}
	store, err := OpenStore(o.Store)
	if err != nil {
		return nil, fmt.Errorf("object store: %w", err)
	}
	p, err := o.producer()
	if err != nil {
		return nil, err
	}
	if err := checkClaim(ctx, store, o.Cluster, o.ClusterUID); err != nil {
		return nil, err
	}
	return backup.Run(ctx, store, ref, backup.Owner{Namespace: o.Namespace, ClusterUID: o.ClusterUID}, p)
}

func (o *Options) producer() (backup.Producer, error) {
	password, err := ReadSecretFile(o.PasswordFile, "backup password")
	if err != nil {
		return nil, err
	}
	switch v1alpha1.BackupMethod(o.Method) {
	case v1alpha1.BackupMethodClone:
		return backup.NewCloneProducer(backup.CloneConfig{Mysqld: o.Mysqld, ScratchDir: o.ScratchDir,
			Donor: backup.Donor{Host: o.TargetHost, Port: o.TargetPort, User: o.User, Password: password,
				CAFile: o.CAFile, CertFile: o.CertFile, KeyFile: o.KeyFile}})
	case v1alpha1.BackupMethodXtraBackup:
		return backup.NewXtrabackupProducer(backup.XtrabackupConfig{Binary: o.Xtrabackup, ScratchDir: o.ScratchDir,
			Host: o.TargetHost, Port: o.TargetPort, User: o.User, Password: password})
	}
	return nil, fmt.Errorf("unknown backup method %q", o.Method)
}

func writeResult(path string, res backupjob.Result) error {
	if path == "" {
		return errors.New("no termination log path")
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return strings.ToValidUTF8(s[:maxMessage], "") + "…"
}
