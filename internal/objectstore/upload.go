package objectstore

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// UploadRequest is one backup to upload: where it goes, what the archive is, the archive stream
// and the producer's own account of it.
type UploadRequest struct {
	Backup BackupRef
	// Namespace is the namespace of the Cluster taking the backup, recorded in metadata.json.
	Namespace string
	// ClusterUID is the Cluster incarnation's metadata.uid, recorded in metadata.json.
	ClusterUID  string
	Method      string // clone or xtrabackup
	Format      string // FormatTar or FormatXbstream
	Compression string // CompressionNone or CompressionZstd

	// Archive is read to io.EOF; its length need not be known. Any other read error fails the
	// upload (a producer that fails should close its pipe with that error).
	Archive io.Reader

	// Finish is called once, only after Archive returned io.EOF: it waits for the producer to
	// exit and reports what it wrote. An error from it, or a size or sha256 other than what
	// was read, fails the upload: the archive is discarded and no metadata.json is written.
	// If ctx ends first, the upload fails without waiting for Finish to return.
	Finish func() (ProducerResult, error)
}

// ProducerResult is what the producer of an archive says it wrote, and the coordinates of the
// snapshot it took.
type ProducerResult struct {
	Size           int64
	SHA256         string // hex
	GTIDExecuted   string
	BinlogFile     string
	BinlogPosition int64
	ServerVersion  string
	StartedAt      time.Time
	StoppedAt      time.Time
}

// checkRequest validates the request and returns the archive extension.
func checkRequest(req *UploadRequest) (string, error) {
	if err := req.Backup.Validate(); err != nil {
		return "", err
	}
	if req.Archive == nil || req.Finish == nil {
		return "", fmt.Errorf("%w: upload request without an archive or a finish function", ErrInvalid)
	}
	if req.Method != string(v1alpha1.BackupMethodClone) && req.Method != string(v1alpha1.BackupMethodXtraBackup) {
		return "", fmt.Errorf("%w: backup method %q", ErrInvalid, req.Method)
	}
	if req.Namespace != "" && !isDNSLabel(req.Namespace) {
		return "", fmt.Errorf("%w: namespace %q is not a namespace name", ErrInvalid, req.Namespace)
	}
	return ArchiveExtension(req.Format, req.Compression)
}

// UploadBackup streams req.Archive to backup.<ext> as a multipart upload holding at most two
// parts in memory, and returns the metadata it wrote to metadata.json.
//
// metadata.json is written last, and only when the archive reached EOF, req.Finish reported
// success with the size and sha256 that were uploaded, and the stored object has that size. On
// any failure UploadBackup aborts the multipart upload and deletes what it wrote, so that the
// directory holds neither metadata.json nor an open upload; the error says so if that cleanup
// failed too. It refuses (ErrAlreadyExists) a backup whose metadata.json already exists.
//
// UploadBackup returns when ctx ends even if the producer hangs. After a failure the caller must
// stop its producer (close the pipe it writes to): a Read of Archive in progress may still
// return after UploadBackup did.
func (c *Client) UploadBackup(ctx context.Context, req UploadRequest) (*Metadata, error) {
	ext, err := checkRequest(&req)
	if err != nil {
		return nil, err
	}
	ref := req.Backup
	metaKey, archiveKey := MetadataKey(c.cfg.Path, ref), ArchiveKey(c.cfg.Path, ref, ext)
	if _, err := c.statObject(ctx, metaKey); err == nil {
		return nil, fmt.Errorf("%s: %w", c.BackupDir(ref), ErrAlreadyExists)
	} else if !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("checking for an existing backup: %w", err)
	}
	md, doc, err := c.uploadArchive(ctx, archiveKey, &req)
	if err != nil {
		return nil, fmt.Errorf("uploading %s: %w", archiveKey, err)
	}
	if _, err := c.putSmallObject(ctx, metaKey, doc, minio.PutObjectOptions{}); err != nil {
		err = fmt.Errorf("writing %s: %w", metaKey, err)
		// The write may have landed with its answer lost: remove it before the archive, so
		// that a failed upload never leaves a metadata.json.
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		if rmErr := c.removeObject(cctx, metaKey); rmErr != nil {
			return nil, fmt.Errorf("%w; and removing it failed, so it may remain: %w", err, rmErr)
		}
		if rmErr := c.removeObject(cctx, archiveKey); rmErr != nil {
			return nil, fmt.Errorf("%w; removing the archive failed (no metadata.json, so incomplete): %w", err, rmErr)
		}
		return nil, err
	}
	return md, nil
}

// uploadArchive runs the multipart upload of the archive and returns the metadata document to
// write. It completes the upload only after the producer's result checked out and the metadata
// validated; on failure it abandons the upload.
func (c *Client) uploadArchive(ctx context.Context, key string, req *UploadRequest) (*Metadata, []byte, error) {
	uploadID, err := c.core.NewMultipartUpload(ctx, c.cfg.Bucket, key,
		minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		err = fmt.Errorf("starting the multipart upload: %w", err)
		// The upload may have been created with its answer lost: abort whatever is open on
		// the key, which lies in this backup's own directory.
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		if cleanupErr := c.abortUploads(cctx, key); cleanupErr != nil {
			return nil, nil, fmt.Errorf("%w; and cleaning up failed: %w", err, cleanupErr)
		}
		return nil, nil, err
	}
	md, doc, err := c.sendAndComplete(ctx, key, uploadID, req)
	if err != nil {
		if cleanupErr := c.abandonUpload(ctx, key, uploadID); cleanupErr != nil {
			return nil, nil, fmt.Errorf("%w; and cleaning up failed: %w", err, cleanupErr)
		}
		return nil, nil, err
	}
	return md, doc, nil
}

func (c *Client) sendAndComplete(ctx context.Context, key, uploadID string, req *UploadRequest) (*Metadata, []byte, error) {
	parts, size, sum, err := c.sendParts(ctx, key, uploadID, req.Archive)
	if err != nil {
		return nil, nil, err
	}
	result, err := callFinish(ctx, req.Finish)
	if err != nil {
		return nil, nil, fmt.Errorf("the backup producer failed after streaming %d bytes: %w", size, err)
	}
	sumHex := hex.EncodeToString(sum)
	if result.Size != size || !strings.EqualFold(result.SHA256, sumHex) {
		return nil, nil, fmt.Errorf("%w: the producer reports %d bytes with sha256 %q, the upload read %d bytes with sha256 %s",
			ErrChecksumMismatch, result.Size, result.SHA256, size, sumHex)
	}
	md := newMetadata(req, result, size, sumHex)
	doc, err := md.Encode()
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.core.CompleteMultipartUpload(ctx, c.cfg.Bucket, key, uploadID, parts, minio.PutObjectOptions{}); err != nil {
		return nil, nil, fmt.Errorf("completing the multipart upload: %w", err)
	}
	info, err := c.statObject(ctx, key)
	if err != nil {
		return nil, nil, fmt.Errorf("checking the uploaded archive: %w", err)
	}
	if info.Size != size {
		return nil, nil, fmt.Errorf("%w: the store holds %d bytes, %d were uploaded", ErrChecksumMismatch, info.Size, size)
	}
	return md, doc, nil
}

// sendParts uploads the archive part by part and returns the parts, the byte count and the
// sha256 of what it read.
func (c *Client) sendParts(ctx context.Context, key, uploadID string, archive io.Reader) ([]minio.CompletePart, int64, []byte, error) {
	partSize := c.cfg.partSize()
	reader := startPartReader(archive, int(partSize))
	defer reader.close()
	var parts []minio.CompletePart
	for {
		p, err := reader.next(ctx)
		if err != nil {
			return nil, 0, nil, err
		}
		if p.err != nil {
			return nil, 0, nil, fmt.Errorf("reading the archive after %d parts: %w", len(parts), p.err)
		}
		if p.n > 0 {
			number := len(parts) + 1
			if number > MaxParts {
				return nil, 0, nil, fmt.Errorf("%w: the archive exceeds %d parts of %d bytes; raise the part size",
					ErrInvalid, MaxParts, partSize)
			}
			uploaded, err := c.core.PutObjectPart(ctx, c.cfg.Bucket, key, uploadID, number,
				bytes.NewReader(p.buf[:p.n]), int64(p.n), minio.PutObjectPartOptions{})
			if err != nil {
				return nil, 0, nil, fmt.Errorf("uploading part %d: %w", number, err)
			}
			parts = append(parts, minio.CompletePart{PartNumber: number, ETag: uploaded.ETag})
		}
		reader.release(p)
		if p.last {
			break
		}
	}
	size, sum := reader.sum()
	if size == 0 {
		return nil, 0, nil, fmt.Errorf("%w: the archive is empty", ErrInvalid)
	}
	return parts, size, sum, nil
}

// abandonUpload aborts the multipart upload and deletes the archive object, in case the upload
// was completed with its answer lost. It runs even when ctx is cancelled.
func (c *Client) abandonUpload(ctx context.Context, key, uploadID string) error {
	cctx, cancel := cleanupContext(ctx)
	defer cancel()
	var errs []error
	if err := c.core.AbortMultipartUpload(cctx, c.cfg.Bucket, key, uploadID); err != nil && !isNotFound(err) {
		errs = append(errs, fmt.Errorf("aborting multipart upload %s: %w", uploadID, err))
	}
	if err := c.removeObject(cctx, key); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// callFinish waits for finish, or for ctx to end: then it gives up on a producer that does not
// exit, leaving finish to return in its own time.
func callFinish(ctx context.Context, finish func() (ProducerResult, error)) (ProducerResult, error) {
	type outcome struct {
		result ProducerResult
		err    error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := finish()
		done <- outcome{r, err}
	}()
	select {
	case o := <-done:
		return o.result, o.err
	case <-ctx.Done():
		return ProducerResult{}, fmt.Errorf("waiting for the producer to finish: %w", context.Cause(ctx))
	}
}

func newMetadata(req *UploadRequest, r ProducerResult, size int64, sumHex string) *Metadata {
	return &Metadata{
		SchemaVersion:  MetadataSchemaVersion,
		Cluster:        req.Backup.Cluster,
		Namespace:      req.Namespace,
		ClusterUID:     req.ClusterUID,
		BackupName:     req.Backup.Name,
		BackupID:       req.Backup.ID,
		Method:         req.Method,
		Format:         req.Format,
		Compression:    req.Compression,
		Size:           size,
		SHA256:         sumHex,
		GTIDExecuted:   r.GTIDExecuted,
		BinlogFile:     r.BinlogFile,
		BinlogPosition: r.BinlogPosition,
		ServerVersion:  r.ServerVersion,
		StartedAt:      r.StartedAt,
		StoppedAt:      r.StoppedAt,
	}
}
