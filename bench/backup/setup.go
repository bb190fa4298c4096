package main

import (
	"context"
	"github.com/cloudnative-mysql/cloudnative-mysql/bench/internal/benchsource"
	"os"
	"path/filepath"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	cmdbackup "github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// dirProducer streams an existing snapshot, the stage of the clone producer after its clone.
type dirProducer struct{ dir string }

func (dirProducer) Method() v1alpha1.BackupMethod { return v1alpha1.BackupMethodClone }
func (dirProducer) Format() string                { return objectstore.FormatTar }
func (dirProducer) Compression() string           { return objectstore.CompressionZstd }
func (p dirProducer) Start(ctx context.Context) (*backup.Stream, error) {
	return backup.DirStream(ctx, time.Now(), p.dir, backup.Coordinates{ServerVersion: "bench"}), nil
}

// writeSecrets writes the object store credentials and the backup password as files, as the
// Job mounts them.
func (b *bench) writeSecrets() (backupjob.Store, error) {
	dir := filepath.Join(b.work, "secrets")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return backupjob.Store{}, err
	}
	for name, value := range map[string]string{"id": b.s3.AccessKey, "secret": b.s3.SecretKey, "password": benchsource.BackupPassword} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(value), 0o600); err != nil {
			return backupjob.Store{}, err
		}
	}
	return backupjob.Store{Bucket: b.s3.Bucket, Path: "bench", Endpoint: b.s3.Endpoint, Region: b.s3.Region,
		ForcePathStyle: true, AccessKeyIDFile: filepath.Join(dir, "id"), SecretAccessKeyFile: filepath.Join(dir, "secret")}, nil
}

func (b *bench) options(host string, port int, ca, cert, key, id string) *cmdbackup.Options {
	return &cmdbackup.Options{Args: backupjob.Args{Cluster: "bench", BackupName: "full", BackupID: id, Method: "clone",
		TargetHost: host, TargetPort: port, User: benchsource.BackupUser, PasswordFile: filepath.Join(b.work, "secrets", "password"),
		CAFile: ca, CertFile: cert, KeyFile: key, ScratchDir: filepath.Join(b.work, "scratch-"+id),
		TerminationLog: filepath.Join(b.work, "termination-log"), Store: b.secrets}, Mysqld: b.m}
}
