package retentionpass

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// deleteDirs deletes the expired directories of the plan and the stale incomplete ones, in one
// bulk deletion (every metadata.json first), and records what is gone in the report.
func deleteDirs(ctx context.Context, store Store, g *gathered, opts Options, report *Report) error {
	var entries []objectstore.BackupEntry
	expired := map[objectstore.BackupRef]bool{}
	for _, b := range report.Plan.Expire {
		e, ok := g.dirs[b.Key]
		if !ok || b.Protected || isProtected(opts, e.Ref) {
			return fmt.Errorf("the plan expires %s, which the pass did not offer for deletion", b.Key)
		}
		entries = append(entries, e)
		expired[e.Ref] = true
	}
	entries = append(entries, g.stale...)
	if len(entries) == 0 {
		return nil
	}
	sizes := make(map[objectstore.BackupRef]int64, len(entries))
	for _, e := range entries {
		sizes[e.Ref] = e.Size
	}
	gone, err := store.DeleteBackupDirs(ctx, entries)
	for _, ref := range gone {
		if expired[ref] {
			report.Expired = append(report.Expired, ref)
			report.ExpiredBytes += sizes[ref]
		} else {
			report.Incomplete = append(report.Incomplete, ref)
			report.IncompleteBytes += sizes[ref]
		}
	}
	return err
}

// abortStaleUploads aborts the multipart uploads older than the grace period in unprotected
// backup directories.
func abortStaleUploads(ctx context.Context, store Store, cluster string, opts Options, report *Report) error {
	uploads, err := store.ListBackupUploads(ctx, cluster)
	if err != nil {
		return err
	}
	cutoff := opts.Now.Add(-opts.grace())
	var stale []objectstore.Upload
	for _, u := range uploads {
		if u.Initiated.Before(cutoff) && !isProtected(opts, u.Ref) {
			stale = append(stale, u)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	if err := store.AbortBackupUploads(ctx, stale); err != nil {
		return err
	}
	report.AbortedUploads = len(stale)
	return nil
}

// deleteSegments deletes the segment objects the plan expires, then removes exactly the deleted
// ones from the index with a conditional rewrite, so that segments other writers add meanwhile
// are kept. The index is rewritten even when some deletions failed, for the ones that succeeded.
func deleteSegments(ctx context.Context, store Store, cluster string, g *gathered, report *Report) error {
	if g.indexETag == "" || len(report.Plan.DeleteSegments) == 0 {
		return nil
	}
	names := make([]string, len(report.Plan.DeleteSegments))
	sizes := make(map[string]int64, len(names))
	for i, s := range report.Plan.DeleteSegments {
		names[i] = s.Name
		sizes[s.Name] = s.Size
	}
	deleted, delErr := store.DeleteSegments(ctx, cluster, names)
	if len(deleted) == 0 {
		return delErr
	}
	report.Segments = len(deleted)
	for _, n := range deleted {
		report.SegmentBytes += sizes[n]
	}
	_, err := store.UpdateIndex(ctx, cluster, func(x *objectstore.Index) error {
		x.Remove(deleted...)
		return nil
	})
	if err != nil {
		return errors.Join(delErr, fmt.Errorf("removing %d deleted segments from the binlog index: %w", len(deleted), err))
	}
	return delErr
}
