package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// storeAfter is what the store holds after the pass.
type storeAfter struct {
	backups, segmentObjects, indexEntries int
	wantBackups, wantSegments             int
}

// checkStore compares the store after the pass with what the window implies: the backups that
// completed within it (the newest at least) are all there and the newest reads back whole, the
// index lists exactly the segments whose last event is not before the oldest kept backup's
// start, and each listed segment's object exists and no other.
func checkStore(ctx context.Context, c *objectstore.Client, inv inventory, res childResult) (storeAfter, error) {
	var a storeAfter
	cutoff := inv.now.Add(-window)
	oldestKept := 0
	for i := range inv.backups {
		if i == 0 || !inv.stoppedAt(i).Before(cutoff) {
			a.wantBackups++
			oldestKept = i
		}
	}
	horizon := inv.stoppedAt(oldestKept).Add(-backupDuration)
	want := map[string]bool{}
	for j := range inv.segments {
		if !inv.lastEvent(j).Before(horizon) {
			want[inv.segmentName(j)] = true
		}
	}
	a.wantSegments = len(want)
	entries, err := c.ListBackups(ctx, cluster)
	if err != nil {
		return a, err
	}
	for _, e := range entries {
		if e.Complete {
			a.backups++
		}
	}
	if _, err := c.DownloadBackup(ctx, inv.backupRef(0), io.Discard); err != nil {
		return a, fmt.Errorf("the newest backup is not whole: %w", err)
	}
	index, _, err := c.ReadIndex(ctx, cluster)
	if err != nil {
		return a, err
	}
	a.indexEntries = len(index.Segments)
	for _, s := range index.Segments {
		if !want[s.Name] {
			return a, fmt.Errorf("the index still lists %s", s.Name)
		}
	}
	a.segmentObjects, err = countSegmentObjects(ctx, c, want)
	if err != nil {
		return a, err
	}
	if a.backups != a.wantBackups || a.indexEntries != a.wantSegments || a.segmentObjects != a.wantSegments ||
		len(entries) != a.backups || res.Report.Segments != inv.segments-a.wantSegments {
		return a, fmt.Errorf("after the pass: %+v (%d directories, %d segments deleted)", a, len(entries), res.Report.Segments)
	}
	return a, nil
}

// countSegmentObjects counts the segment objects left, failing on one the index should not list.
func countSegmentObjects(ctx context.Context, c *objectstore.Client, want map[string]bool) (int, error) {
	cfg := c.Config()
	mc, err := minio.New(cfg.Endpoint, &minio.Options{Creds: credentialsOf(cfg), Region: cfg.Region,
		BucketLookup: minio.BucketLookupPath})
	if err != nil {
		return 0, err
	}
	dir := objectstore.BinlogDir(storePath, cluster)
	n := 0
	for o := range mc.ListObjects(ctx, cfg.Bucket, minio.ListObjectsOptions{Prefix: dir, Recursive: true}) {
		if o.Err != nil {
			return 0, o.Err
		}
		name := strings.TrimPrefix(o.Key, dir)
		if name == objectstore.IndexName {
			continue
		}
		if !want[name] {
			return 0, fmt.Errorf("segment object %s should be gone", name)
		}
		n++
	}
	return n, nil
}
