package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

// DefaultXtrabackup is the xtrabackup binary of Percona images.
const DefaultXtrabackup = "/usr/bin/xtrabackup"

// XtrabackupConfig configures the xtrabackup method. xtrabackup reads the data files, so it runs
// where the target's data directory is mounted.
type XtrabackupConfig struct {
	// Binary is the xtrabackup program; DefaultXtrabackup when empty.
	Binary string
	// ScratchDir is an empty host directory for the defaults file, --target-dir and
	// --extra-lsndir.
	ScratchDir string
	// Host, Port, User and Password reach the target; Password goes into the defaults file only.
	Host     string
	Port     int
	User     string
	Password string
}

// XtrabackupProducer streams `xtrabackup --backup --stream=xbstream`, zstd-compressed.
type XtrabackupProducer struct{ cfg XtrabackupConfig }

// NewXtrabackupProducer checks cfg and returns the producer.
func NewXtrabackupProducer(cfg XtrabackupConfig) (*XtrabackupProducer, error) {
	if cfg.Host == "" || cfg.Port <= 0 || cfg.User == "" || cfg.Password == "" || cfg.ScratchDir == "" {
		return nil, errors.New("xtrabackup: host, port, user, password and scratch directory are required")
	}
	if cfg.Binary == "" {
		cfg.Binary = DefaultXtrabackup
	}
	return &XtrabackupProducer{cfg: cfg}, nil
}

func (*XtrabackupProducer) Method() v1alpha1.BackupMethod { return v1alpha1.BackupMethodXtraBackup }
func (*XtrabackupProducer) Format() string                { return objectstore.FormatXbstream }
func (*XtrabackupProducer) Compression() string           { return objectstore.CompressionZstd }

func (p *XtrabackupProducer) defaultsFile() string {
	return filepath.Join(p.cfg.ScratchDir, "xtrabackup.cnf")
}
func (p *XtrabackupProducer) lsnDir() string { return filepath.Join(p.cfg.ScratchDir, "lsn") }

// Argv is the exact xtrabackup command line. It carries no secret: the connection options live in
// the defaults file, which must come first.
func (p *XtrabackupProducer) Argv() []string {
	return []string{
		p.cfg.Binary,
		"--defaults-file=" + p.defaultsFile(),
		"--backup",
		"--stream=xbstream",
		"--target-dir=" + filepath.Join(p.cfg.ScratchDir, "target"),
		"--extra-lsndir=" + p.lsnDir(),
	}
}

// DefaultsFile renders the option file holding the connection and its password.
func (p *XtrabackupProducer) DefaultsFile() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("[xtrabackup]\n")
	for _, kv := range []struct{ key, value string }{
		{"host", p.cfg.Host}, {"port", strconv.Itoa(p.cfg.Port)}, {"user", p.cfg.User}, {"password", p.cfg.Password},
	} {
		if strings.ContainsAny(kv.value, "\n\r\x00") {
			return nil, fmt.Errorf("xtrabackup: the %s contains a line break or NUL", kv.key)
		}
		fmt.Fprintf(&b, "%s=%s\n", kv.key, quoteOption(kv.value))
	}
	return b.Bytes(), nil
}

// quoteOption double-quotes an option value, escaping backslashes and quotes as MySQL option
// files read them.
func quoteOption(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// Start writes the defaults file (0600) and starts xtrabackup, compressing its stdout.
func (p *XtrabackupProducer) Start(ctx context.Context) (*Stream, error) {
	doc, err := p.DefaultsFile()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.lsnDir(), 0o700); err != nil {
		return nil, fmt.Errorf("xtrabackup: %w", err)
	}
	if err := os.WriteFile(p.defaultsFile(), doc, 0o600); err != nil {
		return nil, fmt.Errorf("xtrabackup: writing the defaults file: %w", err)
	}
	started := time.Now()
	return startStream(ctx, started, p.produce), nil
}

func (p *XtrabackupProducer) produce(ctx context.Context, w io.Writer) (Coordinates, error) {
	argv := p.Argv()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TZ=UTC"}
	stderr := proc.Output{Keep: 8192}
	cmd.Stderr = &stderr
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(2))
	if err != nil {
		return Coordinates{}, err
	}
	cmd.Stdout = enc
	if err := proc.Run(cmd); err != nil {
		// Closing would write the frame end into a stream nobody may read any more.
		enc.Reset(io.Discard)
		_ = enc.Close()
		return Coordinates{}, fmt.Errorf("xtrabackup: %w\n%s", err, stderr.String())
	}
	if closeErr := enc.Close(); closeErr != nil {
		return Coordinates{}, fmt.Errorf("xtrabackup: closing the zstd stream: %w", closeErr)
	}
	info, err := os.ReadFile(filepath.Join(p.lsnDir(), "xtrabackup_info"))
	if err != nil {
		return Coordinates{}, fmt.Errorf("xtrabackup: reading xtrabackup_info: %w", err)
	}
	return ParseXtrabackupInfo(info)
}
