package objectstore

import (
	"context"
	"fmt"
	"io"

	"github.com/minio/minio-go/v7"
)

// PutSegment writes a binlog segment's bytes under the cluster's binlog directory; size must be
// the exact length of r. The caller lists it in the index only after this returns.
func (c *Client) PutSegment(ctx context.Context, cluster, name string, r io.Reader, size int64) error {
	if err := checkSegment(cluster); err != nil {
		return fmt.Errorf("%w: cluster %q: %w", ErrInvalid, cluster, err)
	}
	if err := checkSegmentName(name); err != nil {
		return fmt.Errorf("%w: segment name %q: %w", ErrInvalid, name, err)
	}
	key := BinlogKey(c.cfg.Path, cluster, name)
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", PartSize: uint64(c.cfg.partSize())}
	if _, err := c.core.Client.PutObject(ctx, c.cfg.Bucket, key, r, size, opts); err != nil {
		return fmt.Errorf("writing %s: %w", key, err)
	}
	return nil
}

// DownloadSegment copies an archived segment into w, checked against its index entry: the error
// wraps ErrNotFound when the object is missing and ErrChecksumMismatch when its size or sha256
// differ (w then holds bytes that must be discarded).
func (c *Client) DownloadSegment(ctx context.Context, cluster string, seg Segment, w io.Writer) error {
	if err := checkSegmentName(seg.Name); err != nil {
		return fmt.Errorf("%w: segment name %q: %w", ErrInvalid, seg.Name, err)
	}
	key := BinlogKey(c.cfg.Path, cluster, seg.Name)
	obj, err := c.core.Client.GetObject(ctx, c.cfg.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return fmt.Errorf("reading %s: %w", key, err)
	}
	r := newVerifyingReader(key, obj, seg.Size, seg.SHA256, "_index.json")
	defer r.Close()
	if _, err := io.Copy(w, r); err != nil {
		return fmt.Errorf("downloading segment %s: %w", seg.Name, err)
	}
	return nil
}

// OpenSegment returns a reader of an archived segment's bytes.
func (c *Client) OpenSegment(ctx context.Context, cluster, name string) (io.ReadCloser, error) {
	if err := checkSegmentName(name); err != nil {
		return nil, fmt.Errorf("%w: segment name %q: %w", ErrInvalid, name, err)
	}
	key := BinlogKey(c.cfg.Path, cluster, name)
	obj, err := c.core.Client.GetObject(ctx, c.cfg.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", key, err)
	}
	return obj, nil
}
