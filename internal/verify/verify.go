package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/pitr"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
)

// Config is one verification.
type Config struct {
	Store objectstore.Store
	Ref   objectstore.BackupRef
	// Archive is the directory whose binlog archive is replayed onto the backup (the Cluster's
	// location); empty, or an archive without segments, replays nothing.
	Archive string
	// ScratchDir is an empty host directory for the data directory, the segments and the
	// servers' sockets; what the verification puts there is removed at the end.
	ScratchDir string
	Mysqld     localmysqld.Command
	// MysqldArgs are the options the data directory needs to start (innodb_page_size, …).
	MysqldArgs []string
	// CheckBudget bounds the CHECK TABLE and row count phase; at least one table is checked.
	CheckBudget time.Duration
	// Now is the clock the budget and the step times are read from.
	Now func() time.Time
	Log *slog.Logger
}

// Run verifies cfg.Ref and says what passed, or why it failed (Result.Reason).
func Run(ctx context.Context, cfg Config) backupjob.VerifyResult {
	res := backupjob.VerifyResult{}
	err := run(ctx, cfg, &res)
	if err != nil {
		res.Reason = Reason(ctx, err)
		res.Message = backupjob.Shorten(err.Error(), backupjob.MaxVerifyMessage)
		return res
	}
	res.Passed = true
	return res
}

func run(ctx context.Context, cfg Config, res *backupjob.VerifyResult) error {
	store := ReadOnly(cfg.Store)
	md, err := store.ReadMetadata(ctx, cfg.Ref)
	if err != nil {
		return fmt.Errorf("reading the backup's %s: %w", objectstore.MetadataName, err)
	}
	base, err := gtid.Parse(md.GTIDExecuted)
	if err != nil {
		return fmt.Errorf("%w: gtidExecuted in %s: %w", restore.ErrGTIDMismatch, objectstore.MetadataName, err)
	}
	replay, err := planReplay(ctx, store, cfg.Archive, base)
	if err != nil {
		return err
	}
	// The first table checked changes with the backup and the time, so that when the budget runs
	// out, successive verifications (of one backup or of several) cover different tables.
	seed := cfg.Ref.ID + "/" + cfg.Now().UTC().Format(time.RFC3339Nano)
	checks := &tableChecks{budget: cfg.CheckBudget, now: cfg.Now, seed: seed, log: cfg.Log, res: res}
	dataDir := filepath.Join(cfg.ScratchDir, "data")
	runDir := filepath.Join(cfg.ScratchDir, "run")
	defer func() {
		for _, d := range []string{dataDir, runDir, filepath.Join(cfg.ScratchDir, "segments")} {
			if err := os.RemoveAll(d); err != nil {
				cfg.Log.Error("removing the scratch directory", "dir", d, "error", err)
			}
		}
	}()
	rcfg := restore.Config{Store: store, Ref: cfg.Ref, DataDir: dataDir, RunDir: runDir,
		Mysqld: cfg.Mysqld, MysqldArgs: cfg.MysqldArgs}
	if !replay {
		rcfg.Inspect = checks.run
	}
	begin := cfg.Now()
	if _, err := restore.Restore(ctx, rcfg); err != nil {
		return err
	}
	res.GTIDExecuted = base.String()
	restored := cfg.Now()
	res.RestoreMillis = restored.Sub(begin).Milliseconds() - res.CheckMillis
	cfg.Log.Info("restored and verified the backup", "sha256", md.SHA256, "size", md.Size, "gtidExecuted", md.GTIDExecuted)
	if !replay {
		return nil
	}
	r, err := pitr.Replay(ctx, pitr.Config{Store: store, Cluster: cfg.Archive, Base: md, Target: pitr.Target{Kind: pitr.Latest},
		DataDir: dataDir, ScratchDir: filepath.Join(cfg.ScratchDir, "segments"), RunDir: runDir,
		Mysqld: cfg.Mysqld, MysqldArgs: cfg.MysqldArgs, Inspect: checks.run})
	res.Segments, res.Transactions = r.Segments, int64(r.Applied.Count())
	if err != nil {
		return fmt.Errorf("replaying the binlog archive of %s onto the backup: %w", cfg.Archive, err)
	}
	res.GTIDExecuted = r.Executed.String()
	res.ReplayMillis = cfg.Now().Sub(restored).Milliseconds() - res.CheckMillis
	cfg.Log.Info("replayed the binlog archive", "segments", r.Segments, "transactions", r.Applied.Count(),
		"gtidExecuted", r.Executed.String())
	return nil
}

// planReplay says whether the archive holds transactions to replay onto base; a plan that
// cannot be made (a gap after the backup) fails the verification: a point-in-time recovery from
// this backup would fail the same way.
func planReplay(ctx context.Context, store objectstore.Store, archive string, base gtid.Set) (bool, error) {
	if archive == "" {
		return false, nil
	}
	index, _, err := store.ReadIndex(ctx, archive)
	if err != nil {
		return false, fmt.Errorf("reading the binlog index of %s: %w", archive, err)
	}
	if index == nil || len(index.Segments) == 0 {
		return false, nil
	}
	plan, err := pitr.PlanReplay(index, base, pitr.Target{Kind: pitr.Latest})
	if err != nil {
		return false, fmt.Errorf("planning the replay of the binlog archive of %s onto the backup: %w", archive, err)
	}
	return len(plan.Segments) > 0, nil
}

// Reason names the step err failed, as a reason of the Verified condition.
func Reason(ctx context.Context, err error) string {
	switch {
	case ctx.Err() != nil:
		// The verification's own deadline or cancellation; a step's inner timeout (mysqld not
		// accepting connections within 5 minutes) is that step's failure below.
		return v1alpha1.ReasonVerificationTimedOut
	case errors.Is(err, ErrTableCheck):
		return v1alpha1.ReasonVerificationTable
	case errors.Is(err, restore.ErrMysqldStart):
		return v1alpha1.ReasonVerificationStart
	case errors.Is(err, pitr.ErrGap), errors.Is(err, pitr.ErrSegment), errors.Is(err, pitr.ErrBeyondArchive):
		return v1alpha1.ReasonVerificationReplay
	case errors.Is(err, restore.ErrGTIDMismatch), errors.Is(err, pitr.ErrReplayMismatch):
		return v1alpha1.ReasonVerificationGTID
	case errors.Is(err, objectstore.ErrChecksumMismatch):
		return v1alpha1.ReasonVerificationChecksum
	case errors.Is(err, restore.ErrCorrupt):
		return v1alpha1.ReasonVerificationCorrupt
	case errors.Is(err, objectstore.ErrNotFound), errors.Is(err, objectstore.ErrInvalid):
		// A missing or malformed object; a refused or failed request is VerificationFailed, with
		// the store's error in the message.
		return v1alpha1.ReasonVerificationUnreadable
	}
	return v1alpha1.ReasonVerificationFailed
}
