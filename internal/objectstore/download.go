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
	return &verifyingReader{key: key, src: obj, want: md, hash: sha256.New()}, md, nil
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

// verifyingReader hashes and counts an archive and turns its end into an error unless both
// match the metadata.
type verifyingReader struct {
	key  string
	src  io.ReadCloser
	want *Metadata
	hash hash.Hash
	n    int64
	err  error // sticky
}

func (r *verifyingReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.src.Read(p)
	r.hash.Write(p[:n])
	r.n += int64(n)
	switch {
	case r.n > r.want.Size:
		r.err = fmt.Errorf("%w: %s is longer than the %d bytes its metadata records", ErrChecksumMismatch, r.key, r.want.Size)
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
	if r.n != r.want.Size {
		return fmt.Errorf("%w: %s has %d bytes, its metadata records %d", ErrChecksumMismatch, r.key, r.n, r.want.Size)
	}
	if got := hex.EncodeToString(r.hash.Sum(nil)); got != r.want.SHA256 {
		return fmt.Errorf("%w: %s has sha256 %s, its metadata records %s", ErrChecksumMismatch, r.key, got, r.want.SHA256)
	}
	return io.EOF
}

func (r *verifyingReader) Close() error { return r.src.Close() }
