package retentionpass

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
)

// gathered is what a pass found in the store.
type gathered struct {
	inv retention.Inventory
	// dirs are the complete directories of the inventory, by inventory key.
	dirs map[string]objectstore.BackupEntry
	// stale are the incomplete, unprotected directories older than the grace period.
	stale        []objectstore.BackupEntry
	unreadable   []objectstore.BackupRef
	unrestorable []objectstore.BackupRef
	foreign      []objectstore.BackupRef
	foreignNS    []string
	// found are the complete directories whose metadata.json was there when read.
	found []objectstore.BackupRef
	// indexETag is "" when the cluster has no binlog index.
	indexETag string
}

// inventoryKey names a backup in the inventory: its directory below the cluster's.
func inventoryKey(ref objectstore.BackupRef) string { return ref.Name + "/" + ref.ID }

// gather lists the backup directories, reads the metadata of the complete ones and reads the
// binlog index.
func gather(ctx context.Context, store Store, cluster string, opts Options) (*gathered, error) {
	entries, err := store.ListBackups(ctx, cluster)
	if err != nil {
		return nil, err
	}
	g := &gathered{dirs: map[string]objectstore.BackupEntry{}}
	var complete []objectstore.BackupEntry
	cutoff := opts.Now.Add(-opts.grace())
	for _, e := range entries {
		switch {
		case e.Complete:
			complete = append(complete, e)
		case e.LastModified.Before(cutoff) && !isProtected(opts, e.Ref):
			g.stale = append(g.stale, e)
		}
	}
	mds, err := readMetadata(ctx, store, complete, opts.metadataConcurrency())
	if err != nil {
		return nil, err
	}
	for i, e := range complete {
		if err := g.add(e, mds[i], opts); err != nil {
			return nil, err
		}
	}
	slices.Sort(g.foreignNS)
	g.foreignNS = slices.Compact(g.foreignNS)
	index, etag, err := store.ReadIndex(ctx, cluster)
	if err != nil {
		return nil, err
	}
	g.indexETag = etag
	if etag != "" {
		g.inv.Segments = make([]retention.Segment, len(index.Segments))
		for i, s := range index.Segments {
			g.inv.Segments[i] = retention.Segment{Name: s.Name, FirstEventTime: s.FirstEventTime,
				LastEventTime: s.LastEventTime, Size: s.Size}
		}
	}
	return g, nil
}

// dirKind is what a complete directory is to a pass.
type dirKind int

const (
	dirBase         dirKind = iota // a base backup of this cluster, times known
	dirUnreadable                  // this cluster's (as far as is known), times unknown: kept, protected
	dirGone                        // metadata.json vanished since the listing: being deleted by someone else
	dirForeign                     // another namespace's Cluster of the same name, or another incarnation: not this cluster's
	dirUnrestorable                // no archive of the recorded size: not a recovery point
)

// classify says what a complete directory and its metadata read are. A directory whose
// metadata.json is invalid has unknown times; so has one whose metadata.json says it completed
// more than MaxClockAhead after opts.Now (its Job's clock ran ahead): taken at its word it
// would be the newest backup, and count or size would delete the one that really is, and its
// start would become the binlog horizon. One whose metadata.json names another namespace is not
// this cluster's; one whose archive is missing or has another size than recorded cannot be
// restored, so it must not be the backup that is always kept. Any other read error fails the
// pass.
func classify(e objectstore.BackupEntry, r metadataRead, opts Options) (dirKind, error) {
	switch {
	case errors.Is(r.err, objectstore.ErrNotFound):
		return dirGone, nil
	case errors.Is(r.err, objectstore.ErrInvalid):
		return dirUnreadable, nil
	case r.err != nil:
		return 0, fmt.Errorf("reading the metadata of backup %s/%s: %w", e.Ref.Name, e.Ref.ID, r.err)
	case opts.Namespace != "" && !r.md.BelongsTo(opts.Namespace):
		return dirForeign, nil
	case len(opts.Incarnations) > 0 && r.md.ClusterUID != "" && !slices.Contains(opts.Incarnations, r.md.ClusterUID):
		return dirForeign, nil
	}
	ext, err := r.md.ArchiveExtension()
	if err != nil {
		return dirUnreadable, nil
	}
	if size, ok := e.ArchiveSize(ext); !ok || size != r.md.Size {
		return dirUnrestorable, nil
	}
	if r.md.StoppedAt.After(opts.Now.Add(MaxClockAhead)) {
		return dirUnreadable, nil
	}
	return dirBase, nil
}

// add records a complete directory in g according to its kind. Only base backups and
// directories with unreadable metadata (protected, with unknown times, which stops binlog
// deletion rather than cutting a backup off from its binlogs) enter the inventory.
func (g *gathered) add(e objectstore.BackupEntry, r metadataRead, opts Options) error {
	kind, err := classify(e, r, opts)
	if err != nil || kind == dirGone {
		return err
	}
	g.found = append(g.found, e.Ref)
	switch kind {
	case dirForeign:
		g.foreign = append(g.foreign, e.Ref)
		g.foreignNS = append(g.foreignNS, r.md.Namespace)
		return nil
	case dirUnrestorable:
		g.unrestorable = append(g.unrestorable, e.Ref)
		return nil
	}
	b := retention.BaseBackup{Key: inventoryKey(e.Ref), Size: e.Size, Protected: isProtected(opts, e.Ref)}
	if kind == dirUnreadable {
		b.Protected = true
		g.unreadable = append(g.unreadable, e.Ref)
	} else {
		b.StartedAt, b.CompletedAt = r.md.StartedAt, r.md.StoppedAt
	}
	g.inv.Backups = append(g.inv.Backups, b)
	g.dirs[b.Key] = e
	return nil
}

func isProtected(opts Options, ref objectstore.BackupRef) bool {
	return opts.Protected != nil && opts.Protected(ref)
}

// metadataRead is the outcome of reading one metadata.json.
type metadataRead struct {
	md  *objectstore.Metadata
	err error
}

// readMetadata reads the metadata of every entry with at most workers reads in flight. It
// stops at the first error that is not about the document itself (a transient store error)
// and returns it; per-document outcomes are in the result.
func readMetadata(ctx context.Context, store Store, entries []objectstore.BackupEntry, workers int) ([]metadataRead, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := make([]metadataRead, len(entries))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(entries)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				md, err := store.ReadMetadata(ctx, entries[i].Ref)
				out[i] = metadataRead{md: md, err: err}
				if err != nil && !errors.Is(err, objectstore.ErrNotFound) && !errors.Is(err, objectstore.ErrInvalid) {
					cancel(err)
				}
			}
		}()
	}
feed:
	for i := range entries {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("reading the metadata of %d backups: %w", len(entries), err)
	}
	return out, nil
}
