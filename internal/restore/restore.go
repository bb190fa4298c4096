package restore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/archive"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

var (
	// ErrNotEmpty: the target data directory holds something.
	ErrNotEmpty = errors.New("the data directory is not empty")
	// ErrGTIDMismatch: the restored server's gtid_executed is not the one metadata.json records.
	ErrGTIDMismatch = errors.New("restored gtid_executed differs from the backup's")
	// ErrUnsupported: the archive's format cannot be restored by this build.
	ErrUnsupported = errors.New("unsupported archive")
	// ErrCorrupt: the archive's bytes were read without error but do not decompress or unpack.
	ErrCorrupt = errors.New("the archive is corrupt")
	// ErrMysqldStart: mysqld did not start on the restored data directory.
	ErrMysqldStart = errors.New("mysqld refused to start on the restored data")
)

// Config is one restore.
type Config struct {
	Store objectstore.Store
	Ref   objectstore.BackupRef
	// DataDir is the host path to restore into: absent or empty.
	DataDir string
	// RunDir is a scratch host directory for the verification server's socket and logs.
	RunDir string
	// Mysqld runs the verification server.
	Mysqld localmysqld.Command
	// MysqldArgs are the options the data directory needs to start (e.g. the instance's
	// innodb settings); never secrets.
	MysqldArgs []string
	// Keep names entries of DataDir that the caller put there (a marker of a restore in
	// progress): they do not count as content, and a failed restore leaves them.
	Keep []string
	// RootPassword, when set, becomes the password of root@localhost in the restored data once
	// its gtid_executed is verified. The backup carries the source Cluster's root password; the
	// new Cluster's instance manager logs in with its own. The change is not binary-logged
	// (the verification server runs with --skip-log-bin), so gtid_executed stays the backup's.
	RootPassword string
	// Accounts are the other accounts the Cluster manages whose passwords the restored data must
	// take from this Cluster, not from the backup's (the application owner): each is changed
	// when it exists, with the root password, and unlogged likewise.
	Accounts []Credential
	// Inspect, when set, runs on the verification server once its gtid_executed is verified,
	// before the server stops (a restore verification's table checks); its error fails the
	// restore.
	Inspect func(ctx context.Context, srv *localmysqld.Server) error
}

// Credential is an account and the password it must have.
type Credential struct {
	User, Host, Password string
}

// Restore downloads, verifies and unpacks the backup into cfg.DataDir, then checks it starts with
// the recorded gtid_executed. On error the data directory is left empty.
func Restore(ctx context.Context, cfg Config) (*objectstore.Metadata, error) {
	if err := prepareEmpty(cfg.DataDir, cfg.Keep); err != nil {
		return nil, err
	}
	md, err := unpackVerified(ctx, cfg)
	if err == nil {
		err = dropPersistedSettings(cfg.DataDir)
	}
	if err == nil {
		err = verifyGTID(ctx, cfg, md)
	}
	if err != nil {
		if cerr := Empty(cfg.DataDir, cfg.Keep); cerr != nil {
			err = fmt.Errorf("%w; and emptying %s failed: %w", err, cfg.DataDir, cerr)
		}
		return nil, err
	}
	return md, nil
}

func unpackVerified(ctx context.Context, cfg Config) (*objectstore.Metadata, error) {
	r, md, err := cfg.Store.OpenBackup(ctx, cfg.Ref)
	if err != nil {
		return nil, fmt.Errorf("opening the backup: %w", err)
	}
	defer r.Close()
	if md.Format != objectstore.FormatTar || md.Compression != objectstore.CompressionZstd {
		return nil, fmt.Errorf("%w: %s archive compressed with %s (method %s); only clone backups (tar, zstd) restore here",
			ErrUnsupported, md.Format, md.Compression, md.Method)
	}
	src := &readErrors{r: r}
	if err := archive.Unpack(src, cfg.DataDir); err != nil {
		if src.err != nil {
			// Reading failed (the decompressor reads ahead, so it may fail on the bytes before
			// the reader's error reaches it): the read error is the cause.
			return nil, fmt.Errorf("reading the backup: %w (unpacking into %s stopped: %v)", src.err, cfg.DataDir, err)
		}
		// The store delivered bytes that do not unpack: corruption the sha256 check at the end
		// of the stream would also have found.
		return nil, fmt.Errorf("unpacking the backup into %s: %w: %w", cfg.DataDir, ErrCorrupt, err)
	}
	return md, nil
}

// persistedSettings is where mysqld keeps what SET PERSIST wrote: the source's, in an archive.
const persistedSettings = "mysqld-auto.cnf"

// dropPersistedSettings removes the source's SET PERSIST settings from a restored data
// directory: they are the source Cluster's choices (and could carry owned settings of an older
// build), not this Cluster's. persisted_globals_load is off anyway; the file goes so that no
// later setting brings them back.
func dropPersistedSettings(dir string) error {
	if err := os.Remove(filepath.Join(dir, persistedSettings)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the backup's %s: %w", persistedSettings, err)
	}
	return nil
}

// readErrors remembers the first error, other than the end, its reader returned: an unpack that
// fails without one failed on the archive's content.
type readErrors struct {
	r   io.Reader
	err error
}

func (e *readErrors) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && e.err == nil {
		e.err = err
	}
	return n, err
}

// verifyGTID starts mysqld on the restored directory and compares its gtid_executed.
func verifyGTID(ctx context.Context, cfg Config, md *objectstore.Metadata) error {
	want, err := gtid.Parse(md.GTIDExecuted)
	if err != nil {
		return fmt.Errorf("gtidExecuted in metadata.json: %w", err)
	}
	recorded, err := InitParameterArgs(cfg.DataDir)
	if err != nil {
		return err
	}
	// The data's own initialization values come last: mysqld takes the last of repeated options.
	args := append(append([]string{"--skip-grant-tables", "--skip-log-bin"}, cfg.MysqldArgs...), recorded...)
	srv, err := localmysqld.Start(ctx, cfg.Mysqld, localmysqld.Options{DataDir: cfg.DataDir, RunDir: cfg.RunDir, Args: args})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMysqldStart, err)
	}
	err = checkGTID(ctx, cfg, srv, want)
	if serr := srv.Shutdown(); serr != nil {
		return errors.Join(err, fmt.Errorf("stopping mysqld on the restored data: %w", serr))
	}
	return err
}

// checkGTID compares the running server's gtid_executed with want, then sets the passwords and
// runs cfg.Inspect.
func checkGTID(ctx context.Context, cfg Config, srv *localmysqld.Server, want gtid.Set) error {
	var text string
	if err := srv.DB().QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_executed").Scan(&text); err != nil {
		return fmt.Errorf("reading gtid_executed of the restored data: %w", err)
	}
	got, err := gtid.Parse(text)
	if err != nil {
		return fmt.Errorf("gtid_executed of the restored data: %w", err)
	}
	if !got.Equal(want) {
		return fmt.Errorf("%w: restored %q, metadata.json records %q", ErrGTIDMismatch, got, want)
	}
	if cfg.RootPassword != "" {
		if err := SetPasswords(ctx, srv.DB(), cfg.RootPassword, cfg.Accounts); err != nil {
			return fmt.Errorf("setting root's password on the restored data: %w", err)
		}
	}
	if cfg.Inspect != nil {
		return cfg.Inspect(ctx, srv)
	}
	return nil
}

// prepareEmpty creates dir if missing and refuses it if it holds anything but the kept names.
func prepareEmpty(dir string, keep []string) error {
	if dir == "" {
		return errors.New("no data directory given")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool { return slices.Contains(keep, e.Name()) })
	if len(entries) > 0 {
		return fmt.Errorf("%w: %s holds %d entries (first %q); restore only into an empty directory",
			ErrNotEmpty, dir, len(entries), entries[0].Name())
	}
	return nil
}

// Empty removes what a failed restore put in dir, leaving the kept names; dir held only them
// before. A caller that carries a restored directory further (a point-in-time replay) calls it
// when that fails, so that no partial recovery is left.
func Empty(dir string, keep []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if slices.Contains(keep, e.Name()) {
			continue
		}
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}

// SetPasswords gives root@localhost password, and each of accounts that exists its password, on
// a server started with --skip-grant-tables: the grant tables are loaded first (FLUSH
// PRIVILEGES), as MySQL's password reset does.
func SetPasswords(ctx context.Context, db *sql.DB, password string, accounts []Credential) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	// quote's escaping relies on backslashes being escapes: whatever sql_mode the server took,
	// NO_BACKSLASH_ESCAPES is off on this session.
	if _, err := conn.ExecContext(ctx, "SET SESSION sql_mode = ''"); err != nil {
		return fmt.Errorf("setting the session's sql_mode: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "FLUSH PRIVILEGES"); err != nil {
		return fmt.Errorf("loading the grant tables: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "ALTER USER 'root'@'localhost' IDENTIFIED BY "+quote(password)); err != nil {
		return fmt.Errorf("setting root's password: %w", err)
	}
	for _, a := range accounts {
		if _, err := conn.ExecContext(ctx, "ALTER USER IF EXISTS "+quote(a.User)+"@"+quote(a.Host)+" IDENTIFIED BY "+quote(a.Password)); err != nil {
			return fmt.Errorf("setting the password of %s: %w", a.User, err)
		}
	}
	return nil
}

// quote writes s as a single-quoted SQL string literal (the statements above take no
// placeholders).
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
