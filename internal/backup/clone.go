package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/archive"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// Donor is the instance a clone copies from, the backup account (BACKUP_ADMIN) and the client TLS
// material the recipient presents. Paths are host paths; they must be visible to the recipient
// mysqld (inside Mysqld.Root when it is chrooted).
type Donor struct {
	Host     string
	Port     int
	User     string
	Password string // secret: sent to the recipient over its socket only
	CAFile   string
	CertFile string
	KeyFile  string
}

// CloneConfig configures the clone method.
type CloneConfig struct {
	// Mysqld runs the recipient; it must load the clone plugin (mysql_clone.so).
	Mysqld localmysqld.Command
	// ScratchDir is an empty host directory for the recipient and the cloned data; it must hold
	// the whole data directory of the donor.
	ScratchDir string
	Donor      Donor
	// RecipientArgs are extra mysqld options of the recipient (never secrets).
	RecipientArgs []string
}

// recipientArgs keep the recipient small: it stores nothing of its own.
var recipientArgs = []string{
	"--plugin-load-add=mysql_clone.so",
	"--performance-schema=ON",
	"--innodb-buffer-pool-size=64M",
	"--innodb-redo-log-capacity=32M",
	"--max-connections=10",
}

// CloneProducer backs up an instance with CLONE INSTANCE into scratch space.
type CloneProducer struct{ cfg CloneConfig }

// NewCloneProducer checks cfg and returns the producer.
func NewCloneProducer(cfg CloneConfig) (*CloneProducer, error) {
	d := cfg.Donor
	if d.Host == "" || d.Port <= 0 || d.User == "" || d.Password == "" {
		return nil, errors.New("clone: donor host, port, user and password are required")
	}
	if d.CAFile == "" || d.CertFile == "" || d.KeyFile == "" {
		return nil, errors.New("clone: the CA, client certificate and key files are required")
	}
	if cfg.ScratchDir == "" {
		return nil, errors.New("clone: a scratch directory is required")
	}
	return &CloneProducer{cfg: cfg}, nil
}

func (*CloneProducer) Method() v1alpha1.BackupMethod { return v1alpha1.BackupMethodClone }
func (*CloneProducer) Format() string                { return objectstore.FormatTar }
func (*CloneProducer) Compression() string           { return objectstore.CompressionZstd }

// SnapshotDir is the host path the clone writes the donor's data directory to.
func (p *CloneProducer) SnapshotDir() string { return filepath.Join(p.cfg.ScratchDir, "snapshot") }

// Start clones the donor into the scratch directory, then streams the copy as tar + zstd.
func (p *CloneProducer) Start(ctx context.Context) (*Stream, error) {
	started := time.Now()
	coords, err := p.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return DirStream(ctx, started, p.SnapshotDir(), coords), nil
}

// DirStream streams dir as tar + zstd, reporting coords as the snapshot's coordinates.
func DirStream(ctx context.Context, started time.Time, dir string, coords Coordinates) *Stream {
	return startStream(ctx, started, func(ctx context.Context, w io.Writer) (Coordinates, error) {
		return coords, archive.Pack(ctx, dir, w)
	})
}

// Snapshot runs the recipient, clones the donor into SnapshotDir and returns the copy's
// coordinates. The recipient has exited when it returns.
func (p *CloneProducer) Snapshot(ctx context.Context) (Coordinates, error) {
	mysqld := p.cfg.Mysqld
	opts := localmysqld.Options{
		DataDir: filepath.Join(p.cfg.ScratchDir, "recipient", "data"),
		RunDir:  filepath.Join(p.cfg.ScratchDir, "recipient", "run"),
		Args:    append(append([]string{}, recipientArgs...), p.cfg.RecipientArgs...),
	}
	if _, err := os.Stat(p.SnapshotDir()); err == nil {
		return Coordinates{}, fmt.Errorf("clone: %s already exists: the scratch directory must be empty", p.SnapshotDir())
	}
	if err := localmysqld.Initialize(ctx, mysqld, opts); err != nil {
		return Coordinates{}, fmt.Errorf("clone: preparing the recipient: %w", err)
	}
	recipient, err := localmysqld.Start(ctx, mysqld, opts)
	if err != nil {
		return Coordinates{}, fmt.Errorf("clone: starting the recipient: %w", err)
	}
	if err := cloneInto(ctx, recipient.DB(), p.cfg.Donor, mysqld, p.SnapshotDir()); err != nil {
		recipient.Kill()
		return Coordinates{}, fmt.Errorf("clone: %w\nrecipient error log (tail):\n%s", err, recipient.ErrorLogTail(15))
	}
	if err := recipient.Shutdown(); err != nil {
		return Coordinates{}, fmt.Errorf("clone: stopping the recipient: %w", err)
	}
	// The recipient's own data directory is of no further use; free the space early.
	_ = os.RemoveAll(opts.DataDir)
	return p.settle(ctx)
}

// settleArgs start the cloned directory once, privately: no grants needed (which also keeps it
// off the network), no binary log, no generated keys or certificates left in the copy.
var settleArgs = []string{
	"--skip-grant-tables",
	"--skip-log-bin",
	"--plugin-load-add=mysql_clone.so", // provides performance_schema.clone_status
	"--performance-schema=ON",
	"--auto-generate-certs=OFF",
	"--caching-sha2-password-auto-generate-rsa-keys=OFF",
	"--innodb-buffer-pool-size=64M",
}

// settle starts mysqld once on the cloned directory. The clone's coordinates are only known
// then: the first start finishes the clone (crash recovery of the copied redo) and fills the
// binary log position and GTID set into performance_schema.clone_status. It also proves the
// copy starts before it is uploaded. The server_uuid it generates is removed, so that every
// restore gets its own.
func (p *CloneProducer) settle(ctx context.Context) (Coordinates, error) {
	dir := p.SnapshotDir()
	args := append(append([]string{}, settleArgs...), p.cfg.RecipientArgs...)
	srv, err := localmysqld.Start(ctx, p.cfg.Mysqld, localmysqld.Options{
		DataDir: dir, RunDir: filepath.Join(p.cfg.ScratchDir, "settle"), Args: args,
	})
	if err != nil {
		return Coordinates{}, fmt.Errorf("clone: starting mysqld on the copy: %w", err)
	}
	coords, err := readCloneStatus(ctx, srv.DB())
	if err != nil {
		srv.Kill()
		return Coordinates{}, fmt.Errorf("clone: %w", err)
	}
	if err := srv.Shutdown(); err != nil {
		return Coordinates{}, fmt.Errorf("clone: stopping mysqld on the copy: %w", err)
	}
	if err := os.Remove(filepath.Join(dir, "auto.cnf")); err != nil && !os.IsNotExist(err) {
		return Coordinates{}, fmt.Errorf("clone: removing the copy's server_uuid: %w", err)
	}
	return coords, nil
}
