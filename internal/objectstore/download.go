package objectstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/minio/minio-go/v7"
)

// ReadMetadata returns a backup's metadata.json. A backup without one is incomplete: the error
// wraps ErrNotFound.
func (c *Client) ReadMetadata(ctx context.Context, ref BackupRef) (*Metadata, error) {
	if err := ref.Validate(); err != nil {
		return nil, err
	}
	data, _, err := c.readSmallObject(ctx, MetadataKey(c.cfg.Path, ref), maxDocumentSize)
	if err != nil {
		return nil, fmt.Errorf("reading the metadata of %s: %w", c.BackupDir(ref), err)
	}
	md, err := DecodeMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", c.BackupDir(ref), err)
	}
	if md.Ref() != ref {
		return nil, fmt.Errorf("%w: metadata of %s describes %+v", ErrInvalid, c.BackupDir(ref), md.Ref())
	}
	return md, nil
}

// OpenBackup returns the archive of a complete backup as a stream that is checked against its
// metadata: a Read returns an error wrapping ErrChecksumMismatch instead of io.EOF when the
// size or sha256 differ, or as soon as the stream is longer than recorded. A caller that
// extracts while reading must read to io.EOF, and discard what it extracted on any error.
func (c *Client) OpenBackup(ctx context.Context, ref BackupRef) (io.ReadCloser, *Metadata, error) {
	md, err := c.ReadMetadata(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	ext, _ := md.ArchiveExtension() // validated by ReadMetadata
	key := ArchiveKey(c.cfg.Path, ref, ext)
	obj, err := c.core.Client.GetObject(ctx, c.cfg.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", key, err)
	}
	return newVerifyingReader(key, obj, md.Size, md.SHA256, "its metadata"), md, nil
}

// DownloadBackup copies the verified archive of a complete backup into w and returns its
// metadata. On a mismatch (ErrChecksumMismatch) w has received bytes that must be discarded.
func (c *Client) DownloadBackup(ctx context.Context, ref BackupRef, w io.Writer) (*Metadata, error) {
	r, md, err := c.OpenBackup(ctx, ref)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if _, err := io.Copy(w, r); err != nil {
		return nil, fmt.Errorf("downloading %s: %w", c.BackupDir(ref), err)
	}
	return md, nil
}

// verifyingReader hashes and counts an object and turns its end into an error unless both
// match what its metadata or index entry (recorder) records.
type verifyingReader struct {
	key      string
	src      io.ReadCloser
	size     int64
	sha256   string
	recorder string
	hash     hash.Hash
	n        int64
	err      error // sticky
}

func newVerifyingReader(key string, src io.ReadCloser, size int64, sum, recorder string) *verifyingReader {
	return &verifyingReader{key: key, src: src, size: size, sha256: sum, recorder: recorder, hash: sha256.New()}
}

func (r *verifyingReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.src.Read(p)
	r.hash.Write(p[:n])
	r.n += int64(n)
	switch {
	case r.n > r.size:
		r.err = fmt.Errorf("%w: %s is longer than the %d bytes %s records", ErrChecksumMismatch, r.key, r.size, r.recorder)
		return 0, r.err
	case errors.Is(err, io.EOF):
		r.err = r.verify()
		return n, r.err
	case err != nil:
		if isNotFound(err) {
			err = fmt.Errorf("%w (%w)", ErrNotFound, err)
		}
		r.err = fmt.Errorf("reading %s: %w", r.key, err)
		return n, r.err
	}
	return n, nil
}

func (r *verifyingReader) verify() error {
	if r.n != r.size {
		return fmt.Errorf("%w: %s has %d bytes, %s records %d", ErrChecksumMismatch, r.key, r.n, r.recorder, r.size)
	}
	if got := hex.EncodeToString(r.hash.Sum(nil)); got != r.sha256 {
		return fmt.Errorf("%w: %s has sha256 %s, %s records %s", ErrChecksumMismatch, r.key, got, r.recorder, r.sha256)
	}
	return io.EOF
}

func (r *verifyingReader) Close() error { return r.src.Close() }
