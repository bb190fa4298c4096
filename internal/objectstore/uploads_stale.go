package objectstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// listUploadsPage is how many multipart uploads one ListMultipartUploads request asks for.
const listUploadsPage = 1000

// Upload is a multipart upload still open in the store.
type Upload struct {
	Key       string
	UploadID  string
	Initiated time.Time
	// Ref is the backup directory the upload writes into.
	Ref BackupRef
}

// ListBackupUploads lists the multipart uploads open inside the backup directories of a cluster
// (none of the binlog directory's, none of a Cluster nested in its directory; see
// parseBackupKey), in key order.
func (c *Client) ListBackupUploads(ctx context.Context, cluster string) ([]Upload, error) {
	if err := checkSegment(cluster); err != nil {
		return nil, fmt.Errorf("%w: cluster %q: %w", ErrInvalid, cluster, err)
	}
	dir := ClusterDir(c.cfg.Path, cluster)
	var uploads []Upload
	keyMarker, idMarker := "", ""
	for {
		res, err := c.core.ListMultipartUploads(ctx, c.cfg.Bucket, dir, keyMarker, idMarker, "", listUploadsPage)
		if err != nil {
			return nil, fmt.Errorf("listing the multipart uploads of cluster %s: %w", cluster, err)
		}
		for _, u := range res.Uploads {
			ref, _, ok := parseBackupKey(cluster, strings.TrimPrefix(u.Key, dir))
			if !ok {
				continue
			}
			uploads = append(uploads, Upload{Key: u.Key, UploadID: u.UploadID, Initiated: u.Initiated, Ref: ref})
		}
		if !res.IsTruncated || (res.NextKeyMarker == keyMarker && res.NextUploadIDMarker == idMarker) {
			return uploads, nil
		}
		keyMarker, idMarker = res.NextKeyMarker, res.NextUploadIDMarker
	}
}

// AbortBackupUploads aborts the given multipart uploads; an upload already gone is not an error.
func (c *Client) AbortBackupUploads(ctx context.Context, uploads []Upload) error {
	var errs []error
	for _, u := range uploads {
		if !strings.HasPrefix(u.Key, c.BackupDir(u.Ref)) {
			return fmt.Errorf("%w: upload of %q is not inside backup directory %s", ErrInvalid, u.Key, c.BackupDir(u.Ref))
		}
		err := c.core.AbortMultipartUpload(ctx, c.cfg.Bucket, u.Key, u.UploadID)
		if err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("aborting multipart upload of %s: %w", u.Key, err))
		}
	}
	return errors.Join(errs...)
}
