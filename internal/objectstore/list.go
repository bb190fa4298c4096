package objectstore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// BackupEntry is one backup directory found in the store.
type BackupEntry struct {
	Ref BackupRef
	// Complete is true when the directory holds metadata.json; a directory without it is an
	// interrupted or failed upload.
	Complete bool
	// Keys are the objects in the directory, in key order, and Sizes their sizes.
	Keys  []string
	Sizes []int64
	// Size is the total size of those objects.
	Size int64
	// LastModified is the newest modification time among them.
	LastModified time.Time
}

// ListBackups lists the backup directories of a cluster in key order (backup name, then id),
// complete or not. It skips the binlog directory without listing it, and ignores objects that
// are not a backup directory's own (metadata.json or backup.<ext> directly inside <name>/<id>/;
// see parseBackupKey).
func (c *Client) ListBackups(ctx context.Context, cluster string) ([]BackupEntry, error) {
	if err := checkSegment(cluster); err != nil {
		return nil, fmt.Errorf("%w: cluster %q: %w", ErrInvalid, cluster, err)
	}
	dir, binlogs := ClusterDir(c.cfg.Path, cluster), BinlogDir(c.cfg.Path, cluster)
	var entries []BackupEntry
	add := func(obj minio.ObjectInfo) {
		ref, file, ok := parseBackupKey(cluster, strings.TrimPrefix(obj.Key, dir))
		if !ok {
			return
		}
		if n := len(entries); n == 0 || entries[n-1].Ref != ref {
			entries = append(entries, BackupEntry{Ref: ref})
		}
		e := &entries[len(entries)-1]
		e.Keys, e.Sizes = append(e.Keys, obj.Key), append(e.Sizes, obj.Size)
		e.Size += obj.Size
		e.Complete = e.Complete || file == MetadataName
		if obj.LastModified.After(e.LastModified) {
			e.LastModified = obj.LastModified
		}
	}
	// Keys sort as: backups before "binlogs/", the binlog directory, backups after it. List up
	// to the binlog directory, then resume after it: "binlogs0" sorts right after every
	// "binlogs/..." key.
	reachedBinlogs := false
	err := c.listKeys(ctx, dir, "", func(obj minio.ObjectInfo) bool {
		if strings.HasPrefix(obj.Key, binlogs) {
			reachedBinlogs = true
			return false
		}
		add(obj)
		return true
	})
	if err == nil && reachedBinlogs {
		err = c.listKeys(ctx, dir, strings.TrimSuffix(binlogs, "/")+"0", func(obj minio.ObjectInfo) bool {
			add(obj)
			return true
		})
	}
	if err != nil {
		return nil, fmt.Errorf("listing the backups of cluster %s: %w", cluster, err)
	}
	return entries, nil
}

// ArchiveSize returns the size of the directory's archive backup.<ext>, false when it has none.
func (e BackupEntry) ArchiveSize(ext string) (int64, bool) {
	for i, key := range e.Keys {
		if path.Base(key) == archiveBase+ext {
			return e.Sizes[i], true
		}
	}
	return 0, false
}

// parseBackupKey splits a key relative to a cluster directory into the backup directory and the
// file it is, when it is one of a backup directory's own objects: metadata.json or backup.<ext>
// directly inside <name>/<id>/. Anything else is not this cluster's backup: deeper keys and
// other names are what a Cluster whose path nests inside this cluster's directory writes (its
// backups at <name>/<id>/<backup>/<id>/, its binlogs at <name>/binlogs/).
func parseBackupKey(cluster, rel string) (BackupRef, string, bool) {
	parts := strings.Split(rel, "/")
	if len(parts) != 3 || (parts[2] != MetadataName && !strings.HasPrefix(parts[2], archiveBase)) {
		return BackupRef{}, "", false
	}
	ref := BackupRef{Cluster: cluster, Name: parts[0], ID: parts[1]}
	if ref.ID == BinlogDirName || ref.Validate() != nil {
		return BackupRef{}, "", false
	}
	return ref, parts[2], true
}

// listKeys calls fn for every object under prefix after startAfter, in key order, until fn
// returns false.
func (c *Client) listKeys(ctx context.Context, prefix, startAfter string, fn func(minio.ObjectInfo) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := minio.ListObjectsOptions{Prefix: prefix, Recursive: true, StartAfter: startAfter}
	for obj := range c.core.Client.ListObjectsIter(ctx, c.cfg.Bucket, opts) {
		if obj.Err != nil {
			return fmt.Errorf("listing %s: %w", prefix, obj.Err)
		}
		if !fn(obj) {
			return nil
		}
	}
	return nil
}

// DeleteBackup removes a backup directory: metadata.json first, so that a deletion cut short
// leaves an incomplete backup rather than metadata without an archive; then every other object
// in it; then any multipart upload still open under it. Deleting a missing backup succeeds.
func (c *Client) DeleteBackup(ctx context.Context, ref BackupRef) error {
	if err := ref.Validate(); err != nil {
		return err
	}
	dir := c.BackupDir(ref)
	if err := c.removeObject(ctx, MetadataKey(c.cfg.Path, ref)); err != nil {
		return fmt.Errorf("deleting backup %s: %w", dir, err)
	}
	var keys []string
	err := c.listKeys(ctx, dir, "", func(obj minio.ObjectInfo) bool {
		keys = append(keys, obj.Key)
		return true
	})
	if err != nil {
		return fmt.Errorf("deleting backup %s: %w", dir, err)
	}
	var errs []error
	for _, key := range keys {
		if err := c.removeObject(ctx, key); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.abortUploads(ctx, dir); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deleting backup %s: %w", dir, err)
	}
	return nil
}

// abortUploads aborts every multipart upload open under prefix.
func (c *Client) abortUploads(ctx context.Context, prefix string) error {
	var uploads []minio.ObjectMultipartInfo
	var errs []error
	for u := range c.core.Client.ListIncompleteUploads(ctx, c.cfg.Bucket, prefix, true) {
		if u.Err != nil {
			errs = append(errs, fmt.Errorf("listing multipart uploads under %s: %w", prefix, u.Err))
			continue
		}
		uploads = append(uploads, u)
	}
	for _, u := range uploads {
		err := c.core.AbortMultipartUpload(ctx, c.cfg.Bucket, u.Key, u.UploadID)
		if err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("aborting multipart upload of %s: %w", u.Key, err))
		}
	}
	return errors.Join(errs...)
}
