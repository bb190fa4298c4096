package objectstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/minio/minio-go/v7"
)

const (
	// indexUpdateAttempts bounds how many conflicts UpdateIndex absorbs before giving up.
	indexUpdateAttempts = 100
	indexBackoffMin     = 5 * time.Millisecond
	indexBackoffMax     = 500 * time.Millisecond
)

// ReadIndex returns a cluster's binlog index and its ETag. When there is no index yet it returns
// an empty one and the ETag "", which WriteIndex takes as "create".
func (c *Client) ReadIndex(ctx context.Context, cluster string) (*Index, string, error) {
	index, _, etag, err := c.readIndex(ctx, cluster)
	return index, etag, err
}

// readIndex streams the index into its segments (ReadIndexFrom), never holding the document, and
// also returns the document's sha256 ("" when there is none) for UpdateIndex to compare.
func (c *Client) readIndex(ctx context.Context, cluster string) (*Index, string, string, error) {
	if err := checkSegment(cluster); err != nil {
		return nil, "", "", fmt.Errorf("%w: cluster %q: %w", ErrInvalid, cluster, err)
	}
	key := IndexKey(c.cfg.Path, cluster)
	body, info, err := c.openSmallObject(ctx, key, maxIndexSize)
	if errors.Is(err, ErrNotFound) {
		return NewIndex(), "", "", nil
	}
	if err != nil {
		return nil, "", "", err
	}
	defer body.Close()
	hash := sha256.New()
	limited := &io.LimitedReader{R: body, N: maxIndexSize + 1}
	counted := io.TeeReader(limited, hash)
	index, err := ReadIndexFrom(counted)
	if err == nil {
		_, err = io.Copy(io.Discard, counted) // the rest is whitespace the decoder did not need
	}
	read := maxIndexSize + 1 - limited.N
	switch {
	case err != nil && limited.N <= 0:
		return nil, "", "", fmt.Errorf("%w: %s is more than %d bytes", ErrInvalid, key, int64(maxIndexSize))
	case err != nil:
		return nil, "", "", fmt.Errorf("%s: %w", key, err)
	case read > maxIndexSize:
		return nil, "", "", fmt.Errorf("%w: %s is more than %d bytes", ErrInvalid, key, int64(maxIndexSize))
	case info.Size >= 0 && read != info.Size:
		return nil, "", "", fmt.Errorf("reading %s: got %d bytes, want %d", key, read, info.Size)
	}
	return index, hex.EncodeToString(hash.Sum(nil)), info.ETag, nil
}

// digest is the sha256 readIndex returns for a document.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// WriteIndex writes the index only if the stored one still has the given ETag (If-Match), or,
// with etag "", only if there is none (If-None-Match: *). It returns the new ETag, or an error
// wrapping ErrConflict when another writer got there first.
func (c *Client) WriteIndex(ctx context.Context, cluster string, index *Index, etag string) (string, error) {
	if err := checkSegment(cluster); err != nil {
		return "", fmt.Errorf("%w: cluster %q: %w", ErrInvalid, cluster, err)
	}
	data, err := index.Encode()
	if err != nil {
		return "", err
	}
	return c.putConditional(ctx, IndexKey(c.cfg.Path, cluster), data, etag)
}

// putConditional writes a small document only if the stored one still has etag (If-Match), or,
// with etag "", only if there is none (If-None-Match: *).
func (c *Client) putConditional(ctx context.Context, key string, data []byte, etag string) (string, error) {
	opts := minio.PutObjectOptions{}
	if etag == "" {
		opts.SetMatchETagExcept("*")
	} else {
		opts.SetMatchETag(etag)
	}
	newETag, err := c.putSmallObject(ctx, key, data, opts)
	switch {
	case err == nil:
		return newETag, nil
	case isConflict(err), etag != "" && isNotFound(err): // If-Match on a deleted index: 404
		return "", fmt.Errorf("writing %s: %w: %w", key, ErrConflict, err)
	}
	return "", fmt.Errorf("writing %s: %w", key, err)
}

// UpdateIndex reads the index, applies mutate and writes the result conditionally on the version
// read, retrying from a fresh read when another writer got there first, so that no update is
// lost. It skips the write when mutate changed nothing.
//
// mutate may run more than once and must derive its change from the index it is given;
// applying it twice must be harmless (Upsert and Remove are). A write whose answer was lost is
// recognised by reading back the bytes it wrote. An error from mutate stops the update.
func (c *Client) UpdateIndex(ctx context.Context, cluster string, mutate func(*Index) error) (*Index, error) {
	key := IndexKey(c.cfg.Path, cluster)
	backoff := indexBackoffMin
	for attempt := 1; ; attempt++ {
		index, stored, etag, err := c.readIndex(ctx, cluster)
		if err != nil {
			return nil, err
		}
		if err := mutate(index); err != nil {
			return nil, fmt.Errorf("updating %s: %w", key, err)
		}
		data, err := index.Encode()
		if err != nil {
			return nil, fmt.Errorf("updating %s: %w", key, err)
		}
		if digest(data) == stored || (stored == "" && len(index.Segments) == 0) {
			return index, nil
		}
		_, err = c.putConditional(ctx, key, data, etag)
		if err == nil {
			return index, nil
		}
		if !errors.Is(err, ErrConflict) {
			return nil, err
		}
		if _, now, _, readErr := c.readIndex(ctx, cluster); readErr == nil && now == digest(data) {
			return index, nil // our write landed; its answer was lost and a retry found it done
		}
		if attempt == indexUpdateAttempts {
			return nil, fmt.Errorf("updating %s: gave up after %d conflicts: %w", key, attempt, err)
		}
		if err := sleep(ctx, backoff/2+rand.N(backoff/2+1)); err != nil {
			return nil, fmt.Errorf("updating %s: %w", key, err)
		}
		backoff = min(2*backoff, indexBackoffMax)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
