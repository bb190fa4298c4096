package pitr

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
)

// Config is one replay onto a restored base backup.
type Config struct {
	Store objectstore.Store
	// Cluster is the cluster whose archive (<path>/<cluster>/binlogs/) is replayed.
	Cluster string
	// Base is the metadata of the base backup restored into DataDir; its gtid_executed is
	// where the replay starts.
	Base   *objectstore.Metadata
	Target Target
	// DataDir holds the restored, verified base backup.
	DataDir string
	// ScratchDir is a host directory for the downloaded segments, which mysqlbinlog reads
	// (so it must be inside Mysqld.Root); created, and removed afterwards.
	ScratchDir string
	// RunDir is a scratch directory for the replay server's socket and logs.
	RunDir string
	// Mysqld runs the replay server; mysqlbinlog and mysql run with the same prefix.
	Mysqld     localmysqld.Command
	MysqldArgs []string
	// RootPassword, when set, becomes root@localhost's password once the replay is done, as in
	// restore.Config (after the replay, so that a password change in the archive cannot undo it).
	RootPassword string
	// Accounts, with RootPassword, are the other accounts whose passwords are this Cluster's
	// (restore.Config.Accounts).
	Accounts []restore.Credential
	// Inspect, when set, runs on the replay server once gtid_executed is read, before the server
	// stops (restore.Config.Inspect); its error fails the replay.
	Inspect func(ctx context.Context, srv *localmysqld.Server) error
}

// Result says what a replay did.
type Result struct {
	// Segments counts the segments downloaded, Bytes their size.
	Segments int
	Bytes    int64
	// Applied is the set of transactions replayed on top of the base backup; Executed the
	// server's gtid_executed afterwards (the base backup's plus Applied).
	Applied  gtid.Set
	Executed gtid.Set
}

// Replay carries the base backup restored in cfg.DataDir to cfg.Target: it plans the segments
// (PlanReplay), downloads each one checked against its size and sha256, cuts a time target at
// the transaction committed last at or before it, applies the transactions with the image's
// mysqlbinlog piped into mysql on a private server, and requires gtid_executed to equal the
// base backup's set plus exactly those transactions. On error the data directory is left as it
// is: the caller empties it (restore.Empty), so no partial recovery survives.
func Replay(ctx context.Context, cfg Config) (Result, error) {
	base, err := gtid.Parse(cfg.Base.GTIDExecuted)
	if err != nil {
		return Result{}, fmt.Errorf("gtidExecuted of the base backup: %w", err)
	}
	index, _, err := cfg.Store.ReadIndex(ctx, cfg.Cluster)
	if err != nil {
		return Result{}, fmt.Errorf("reading the binlog index of cluster %s: %w", cfg.Cluster, err)
	}
	plan, err := PlanReplay(index, base, cfg.Target)
	if err != nil {
		return Result{}, fmt.Errorf("planning the replay from backup %s/%s to the %s: %w", cfg.Base.BackupName, cfg.Base.BackupID, cfg.Target, err)
	}
	if err := os.RemoveAll(cfg.ScratchDir); err != nil { // what an interrupted replay left
		return Result{}, fmt.Errorf("removing %s: %w", cfg.ScratchDir, err)
	}
	if err := os.MkdirAll(cfg.ScratchDir, 0o750); err != nil {
		return Result{}, fmt.Errorf("creating %s: %w", cfg.ScratchDir, err)
	}
	defer os.RemoveAll(cfg.ScratchDir)
	res := Result{}
	files, err := download(ctx, cfg, plan.Segments, &res)
	if err != nil {
		return res, err
	}
	expected := plan.Expected
	if cfg.Target.Kind == AtTime {
		cut, err := cutFiles(plan.Segments, files, base, cfg.Target)
		if err != nil {
			return res, err
		}
		expected = gtid.Union(base, cut)
	}
	res.Applied = expected.Subtract(base)
	res.Executed, err = apply(ctx, cfg, files, res.Applied, expected)
	if err != nil {
		return res, err
	}
	if !res.Executed.Equal(expected) {
		return res, fmt.Errorf("%w: gtid_executed is %q, the %s needs %q (missing %q, extra %q)", ErrReplayMismatch,
			res.Executed, cfg.Target, expected, expected.Subtract(res.Executed), res.Executed.Subtract(expected))
	}
	return res, nil
}

// download fetches the planned segments into numbered files, in replay order, each checked
// against its index entry.
func download(ctx context.Context, cfg Config, segs []objectstore.Segment, res *Result) ([]string, error) {
	files := make([]string, 0, len(segs))
	for i, s := range segs {
		path := filepath.Join(cfg.ScratchDir, fmt.Sprintf("segment.%06d", i+1))
		if err := downloadOne(ctx, cfg, s, path); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSegment, err)
		}
		files = append(files, path)
		res.Segments++
		res.Bytes += s.Size
	}
	return files, nil
}

func downloadOne(ctx context.Context, cfg Config, s objectstore.Segment, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	err = cfg.Store.DownloadSegment(ctx, cfg.Cluster, s, f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing %s: %w", path, cerr)
	}
	return err
}

// cutFiles cuts the planned segments at the target time: a segment that ends at or before it is
// taken whole from its index entry, the others are read (their GTID events only), one at a time.
func cutFiles(segs []objectstore.Segment, files []string, base gtid.Set, t Target) (gtid.Set, error) {
	cut := NewCut(base, t.Time)
	for i, s := range segs {
		whole, err := cut.Whole(s)
		if err != nil {
			return gtid.Set{}, err
		}
		if whole {
			continue
		}
		txns, err := ReadTransactions(files[i])
		if err != nil {
			return gtid.Set{}, fmt.Errorf("%w: %w", ErrSegment, err)
		}
		if err := cut.Read(txns); err != nil {
			return gtid.Set{}, err
		}
	}
	return cut.Set(), nil
}

// apply starts a private server on the data directory (no grants, no network, no binary log,
// GTIDs on so that each replayed transaction keeps its GTID), pipes the segments through
// mysqlbinlog --include-gtids into mysql, sets root's password, and returns gtid_executed.
// The server does not flush its redo log at every commit: a crash of it fails the replay and the
// data directory is discarded anyway, and its clean shutdown makes everything durable.
func apply(ctx context.Context, cfg Config, files []string, set, expected gtid.Set) (gtid.Set, error) {
	recorded, err := restore.InitParameterArgs(cfg.DataDir)
	if err != nil {
		return gtid.Set{}, err
	}
	args := append([]string{"--skip-grant-tables", "--skip-log-bin", "--skip-replica-start",
		"--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--max-allowed-packet=" + maxPacket,
		"--innodb-flush-log-at-trx-commit=2"}, cfg.MysqldArgs...)
	args = append(args, recorded...) // the data's own initialization values win (restore.Restore)
	srv, err := localmysqld.Start(ctx, cfg.Mysqld, localmysqld.Options{DataDir: cfg.DataDir, RunDir: cfg.RunDir, Args: args})
	if err != nil {
		return gtid.Set{}, fmt.Errorf("starting mysqld to replay: %w", err)
	}
	executed, err := applyOn(ctx, cfg, srv, files, set, expected)
	if serr := srv.Shutdown(); serr != nil {
		err = errors.Join(err, fmt.Errorf("stopping the replay server: %w", serr))
	}
	return executed, err
}

func applyOn(ctx context.Context, cfg Config, srv *localmysqld.Server, files []string, set, expected gtid.Set) (gtid.Set, error) {
	if !set.IsEmpty() {
		if err := pipeBinlogs(ctx, cfg.Mysqld, srv.SocketPath(), files, set); err != nil {
			return gtid.Set{}, fmt.Errorf("%w\n%s", err, srv.ErrorLogTail(10))
		}
	}
	if cfg.RootPassword != "" {
		if err := restore.SetPasswords(ctx, srv.DB(), cfg.RootPassword, cfg.Accounts); err != nil {
			return gtid.Set{}, err
		}
	}
	var text string
	if err := srv.DB().QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_executed").Scan(&text); err != nil {
		return gtid.Set{}, fmt.Errorf("reading gtid_executed after the replay: %w", err)
	}
	executed, err := gtid.Parse(text)
	if err != nil || cfg.Inspect == nil {
		return executed, err
	}
	if !executed.Equal(expected) {
		return executed, nil // Replay reports the mismatch; nothing to inspect
	}
	return executed, cfg.Inspect(ctx, srv)
}
