package objectstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
)

const (
	// deleteBatch is the most keys one DeleteObjects request may name.
	deleteBatch = 1000
	// minDeleteBatch is the fewest keys a DeleteObjects request names when there are more:
	// smaller batches spread a deletion over the requests in flight (servers may delete the
	// keys of one request one after the other).
	minDeleteBatch = 100
	// deleteConcurrency bounds the DeleteObjects requests in flight.
	deleteConcurrency = 8
	// maxReportedDeleteErrors bounds the per-key failures spelled out in an error.
	maxReportedDeleteErrors = 5
)

// DeleteBackupDirs deletes backup directories as ListBackups listed them, in bulk: first the
// metadata.json of every directory, then every other listed object of the directories whose
// metadata.json is confirmed gone. A deletion cut short thus leaves incomplete directories
// (which a later pass removes), never metadata without its archive. It returns the directories
// whose listed objects are all gone, and an error naming the failures. Objects written after the
// listing are left in place; deleting a missing object succeeds.
func (c *Client) DeleteBackupDirs(ctx context.Context, entries []BackupEntry) ([]BackupRef, error) {
	metaKeys := make([]string, 0, len(entries))
	for _, e := range entries {
		if err := c.checkEntry(e); err != nil {
			return nil, err
		}
		metaKeys = append(metaKeys, MetadataKey(c.cfg.Path, e.Ref))
	}
	goneMeta, err := c.removeKeys(ctx, metaKeys)
	var rest []string
	for _, e := range entries {
		if !goneMeta[MetadataKey(c.cfg.Path, e.Ref)] {
			continue
		}
		for _, k := range e.Keys {
			if !strings.HasSuffix(k, "/"+MetadataName) {
				rest = append(rest, k)
			}
		}
	}
	goneRest, restErr := c.removeKeys(ctx, rest)
	var deleted []BackupRef
	for _, e := range entries {
		if dirGone(c.cfg.Path, e, goneMeta, goneRest) {
			deleted = append(deleted, e.Ref)
		}
	}
	if err := errors.Join(err, restErr); err != nil {
		return deleted, fmt.Errorf("deleting %d backup directories: %w", len(entries), err)
	}
	return deleted, nil
}

// checkEntry refuses an entry whose keys are not directly inside its own backup directory.
func (c *Client) checkEntry(e BackupEntry) error {
	if err := e.Ref.Validate(); err != nil {
		return err
	}
	dir := c.BackupDir(e.Ref)
	for _, k := range e.Keys {
		if !strings.HasPrefix(k, dir) || len(k) == len(dir) || strings.Contains(k[len(dir):], "/") {
			return fmt.Errorf("%w: key %q is not inside backup directory %s", ErrInvalid, k, dir)
		}
	}
	return nil
}

func dirGone(prefix string, e BackupEntry, goneMeta, goneRest map[string]bool) bool {
	if !goneMeta[MetadataKey(prefix, e.Ref)] {
		return false
	}
	for _, k := range e.Keys {
		if !goneMeta[k] && !goneRest[k] {
			return false
		}
	}
	return true
}

// DeleteSegments deletes archived binlog segment objects of a cluster in bulk. It does not touch
// _index.json (whose name it refuses): the caller removes the segments it returns, the ones
// confirmed gone, from the index afterwards. Deleting a missing segment succeeds.
func (c *Client) DeleteSegments(ctx context.Context, cluster string, names []string) ([]string, error) {
	if err := checkSegment(cluster); err != nil {
		return nil, fmt.Errorf("%w: cluster %q: %w", ErrInvalid, cluster, err)
	}
	keys := make([]string, len(names))
	for i, n := range names {
		if err := checkSegmentName(n); err != nil {
			return nil, fmt.Errorf("%w: segment name %q: %w", ErrInvalid, n, err)
		}
		keys[i] = BinlogKey(c.cfg.Path, cluster, n)
	}
	gone, err := c.removeKeys(ctx, keys)
	deleted := make([]string, 0, len(gone))
	for i, n := range names {
		if gone[keys[i]] {
			deleted = append(deleted, n)
		}
	}
	if err != nil {
		return deleted, fmt.Errorf("deleting %d binlog segments of cluster %s: %w", len(names), cluster, err)
	}
	return deleted, nil
}

// removeKeys deletes keys with DeleteObjects requests of minDeleteBatch to deleteBatch keys,
// deleteConcurrency at a time, and returns the keys the server confirmed deleted. A key it did not confirm (the
// request failed, its answer was lost, or the key failed on its own) is reported in the error.
func (c *Client) removeKeys(ctx context.Context, keys []string) (map[string]bool, error) {
	gone := make(map[string]bool, len(keys))
	if len(keys) == 0 {
		return gone, nil
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs deleteErrors
	)
	sem := make(chan struct{}, deleteConcurrency)
	size := min(deleteBatch, max(minDeleteBatch, (len(keys)+deleteConcurrency-1)/deleteConcurrency))
	for start := 0; start < len(keys); start += size {
		batch := keys[start:min(start+size, len(keys))]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			confirmed, failed := c.removeBatch(ctx, batch)
			mu.Lock()
			defer mu.Unlock()
			for _, k := range confirmed {
				gone[k] = true
			}
			errs.add(failed)
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if !gone[k] {
			errs.notConfirmed(k)
		}
	}
	return gone, errs.err()
}

// removeBatch sends one DeleteObjects request and returns the keys confirmed deleted and the
// errors the answer reported.
func (c *Client) removeBatch(ctx context.Context, batch []string) ([]string, []error) {
	objects := make(chan minio.ObjectInfo, len(batch))
	for _, k := range batch {
		objects <- minio.ObjectInfo{Key: k}
	}
	close(objects)
	var confirmed []string
	var failed []error
	for r := range c.core.Client.RemoveObjectsWithResult(ctx, c.cfg.Bucket, objects, minio.RemoveObjectsOptions{}) {
		switch {
		case r.Err == nil && r.ObjectName != "":
			confirmed = append(confirmed, r.ObjectName)
		case r.Err != nil && isNotFound(r.Err) && r.ObjectName != "":
			confirmed = append(confirmed, r.ObjectName)
		case r.Err != nil && r.ObjectName == "":
			failed = append(failed, r.Err)
		case r.Err != nil:
			failed = append(failed, fmt.Errorf("%s: %w", r.ObjectName, r.Err))
		}
	}
	return confirmed, failed
}

// deleteErrors collects the failures of a bulk deletion, spelling out only the first few.
type deleteErrors struct {
	errs     []error
	failures int
	missing  int
	firstKey string
}

func (d *deleteErrors) add(errs []error) {
	d.failures += len(errs)
	for _, err := range errs {
		if len(d.errs) < maxReportedDeleteErrors {
			d.errs = append(d.errs, err)
		}
	}
}

func (d *deleteErrors) notConfirmed(key string) {
	if d.missing == 0 {
		d.firstKey = key
	}
	d.missing++
}

func (d *deleteErrors) err() error {
	if d.missing == 0 && d.failures == 0 {
		return nil
	}
	err := errors.Join(d.errs...)
	if err == nil {
		err = errors.New("no answer for them")
	}
	return fmt.Errorf("%d of the objects not confirmed deleted (first %s): %w", d.missing, d.firstKey, err)
}
