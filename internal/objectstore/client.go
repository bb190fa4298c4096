package objectstore

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Store is the object store as its callers use it; Client implements it, tests of callers may
// fake it.
type Store interface {
	// UploadBackup streams an archive and, once it is verified, writes its metadata.json.
	UploadBackup(ctx context.Context, req UploadRequest) (*Metadata, error)
	// ReadMetadata returns a backup's metadata, ErrNotFound when it has none (incomplete).
	ReadMetadata(ctx context.Context, ref BackupRef) (*Metadata, error)
	// OpenBackup returns the archive as a reader that fails instead of ending when the bytes do
	// not match the metadata.
	OpenBackup(ctx context.Context, ref BackupRef) (io.ReadCloser, *Metadata, error)
	// DownloadBackup copies a verified archive into w.
	DownloadBackup(ctx context.Context, ref BackupRef, w io.Writer) (*Metadata, error)
	// ListBackups lists the backup directories of a cluster, complete or not.
	ListBackups(ctx context.Context, cluster string) ([]BackupEntry, error)
	// DeleteBackup removes a backup directory, metadata.json first.
	DeleteBackup(ctx context.Context, ref BackupRef) error
	// DeleteBackupDirs removes listed backup directories in bulk, every metadata.json first, and
	// returns those that are gone.
	DeleteBackupDirs(ctx context.Context, entries []BackupEntry) ([]BackupRef, error)
	// DeleteSegments removes binlog segment objects in bulk (not their index entries) and
	// returns the names that are gone.
	DeleteSegments(ctx context.Context, cluster string, names []string) ([]string, error)
	// ListBackupUploads lists the multipart uploads open in a cluster's backup directories.
	ListBackupUploads(ctx context.Context, cluster string) ([]Upload, error)
	// AbortBackupUploads aborts multipart uploads ListBackupUploads returned.
	AbortBackupUploads(ctx context.Context, uploads []Upload) error
	// DownloadSegment copies an archived segment into w, checked against its index entry.
	DownloadSegment(ctx context.Context, cluster string, seg Segment, w io.Writer) error
	// ReadIndex returns a cluster's binlog index and its ETag ("" when there is none yet).
	ReadIndex(ctx context.Context, cluster string) (*Index, string, error)
	// WriteIndex writes the index if it is still at etag, and returns the new ETag.
	WriteIndex(ctx context.Context, cluster string, index *Index, etag string) (string, error)
	// UpdateIndex applies mutate to the current index and writes it, retrying on conflict.
	UpdateIndex(ctx context.Context, cluster string, mutate func(*Index) error) (*Index, error)
}

var _ Store = (*Client)(nil)

// cleanupTimeout bounds the requests that undo a failed upload; they run even when the upload's
// context was cancelled.
const cleanupTimeout = 30 * time.Second

// The dialer settings of minio.DefaultTransport, kept by NewGuarded.
const (
	dialTimeout   = 30 * time.Second
	dialKeepAlive = 30 * time.Second
)

// Client is a Store on an S3-compatible bucket, through minio-go. It is safe for concurrent use.
type Client struct {
	cfg  Config
	core *minio.Core
}

// New returns a Client for cfg. It does no request.
func New(cfg Config) (*Client, error) { return NewGuarded(cfg, nil) }

// Control is a net.Dialer Control function: it is called with the IP address and port every
// connection is about to be made to (after DNS resolution, before the connection, for the first
// request and for any later one), and an error refuses the connection.
type Control func(network, address string, c syscall.RawConn) error

// NewGuarded returns a Client for cfg whose connections control may refuse (nil refuses none).
// The operator opens the object stores users name with the control of internal/egress. A
// connection through a proxy (HTTPS_PROXY and the like) is made to the proxy, so control sees the
// proxy's address. It does no request.
func NewGuarded(cfg Config, control Control) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	transport, err := minio.DefaultTransport(cfg.Secure)
	if err != nil {
		return nil, fmt.Errorf("building the object store transport: %w", err)
	}
	if control != nil {
		// minio.DefaultTransport's dialer, with control.
		transport.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: dialKeepAlive, Control: control}).DialContext
	}
	if len(cfg.CABundle) > 0 {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(cfg.CABundle)
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	lookup := minio.BucketLookupDNS
	switch {
	case cfg.ForcePathStyle:
		lookup = minio.BucketLookupPath
	case cfg.Endpoint == awsEndpoint:
		lookup = minio.BucketLookupAuto
	}
	creds := cfg.Credentials
	core, err := minio.NewCore(cfg.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken),
		Secure:       cfg.Secure,
		Transport:    transport,
		Region:       cfg.Region,
		BucketLookup: lookup,
		MaxRetries:   cfg.MaxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the object store client for %s: %w", cfg.EndpointURL(), err)
	}
	return &Client{cfg: cfg, core: core}, nil
}

// Config returns the configuration the client was created with.
func (c *Client) Config() Config { return c.cfg }

// BackupDir returns the directory of a backup under the client's path prefix.
func (c *Client) BackupDir(ref BackupRef) string { return BackupDir(c.cfg.Path, ref) }

// statObject returns the object's info, or an error wrapping ErrNotFound.
func (c *Client) statObject(ctx context.Context, key string) (minio.ObjectInfo, error) {
	info, err := c.core.StatObject(ctx, c.cfg.Bucket, key, minio.StatObjectOptions{})
	if err != nil {
		if isNotFound(err) {
			return minio.ObjectInfo{}, fmt.Errorf("%s: %w", key, ErrNotFound)
		}
		return minio.ObjectInfo{}, fmt.Errorf("stat %s: %w", key, err)
	}
	return info, nil
}

// openSmallObject opens an object of at most limit bytes (as its size says) and returns its body
// and info, or an error wrapping ErrNotFound. The caller closes the body and bounds what it reads.
func (c *Client) openSmallObject(ctx context.Context, key string, limit int64) (io.ReadCloser, minio.ObjectInfo, error) {
	body, info, _, err := c.core.GetObject(ctx, c.cfg.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		if isNotFound(err) {
			return nil, info, fmt.Errorf("%s: %w", key, ErrNotFound)
		}
		return nil, info, fmt.Errorf("reading %s: %w", key, err)
	}
	if info.Size > limit {
		body.Close()
		return nil, info, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrInvalid, key, info.Size, limit)
	}
	return body, info, nil
}

// readSmallObject reads a whole object of at most limit bytes and returns it with its ETag, or
// an error wrapping ErrNotFound.
func (c *Client) readSmallObject(ctx context.Context, key string, limit int64) ([]byte, string, error) {
	body, info, err := c.openSmallObject(ctx, key, limit)
	if err != nil {
		return nil, "", err
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", key, err)
	}
	if int64(len(data)) > limit || (info.Size >= 0 && int64(len(data)) != info.Size) {
		return nil, "", fmt.Errorf("reading %s: got %d bytes, want %d", key, len(data), info.Size)
	}
	return data, info.ETag, nil
}

// removeObject deletes one object; a missing object is not an error.
func (c *Client) removeObject(ctx context.Context, key string) error {
	err := c.core.RemoveObject(ctx, c.cfg.Bucket, key, minio.RemoveObjectOptions{})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting %s: %w", key, err)
	}
	return nil
}

// putSmallObject writes a small object in one request with the given options.
func (c *Client) putSmallObject(ctx context.Context, key string, data []byte, opts minio.PutObjectOptions) (string, error) {
	if opts.ContentType == "" {
		opts.ContentType = "application/json"
	}
	info, err := c.core.Client.PutObject(ctx, c.cfg.Bucket, key, bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		return "", err
	}
	return info.ETag, nil
}

// cleanupContext returns a context for undoing a failed operation: not cancelled with ctx, but
// bounded.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}
