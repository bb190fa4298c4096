package retentionpass

import (
	"context"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// Store is what a pass needs of the object store; *objectstore.Client implements it.
type Store interface {
	// ListBackups lists the backup directories of a cluster, complete or not.
	ListBackups(ctx context.Context, cluster string) ([]objectstore.BackupEntry, error)
	// ReadMetadata returns a backup's metadata.json (ErrNotFound: none; ErrInvalid: unreadable).
	ReadMetadata(ctx context.Context, ref objectstore.BackupRef) (*objectstore.Metadata, error)
	// DeleteBackupDirs removes listed directories, every metadata.json first, and returns those
	// that are gone.
	DeleteBackupDirs(ctx context.Context, entries []objectstore.BackupEntry) ([]objectstore.BackupRef, error)
	// ListBackupUploads lists the multipart uploads open in the backup directories.
	ListBackupUploads(ctx context.Context, cluster string) ([]objectstore.Upload, error)
	// AbortBackupUploads aborts multipart uploads.
	AbortBackupUploads(ctx context.Context, uploads []objectstore.Upload) error
	// DeleteSegments removes binlog segment objects and returns the names that are gone.
	DeleteSegments(ctx context.Context, cluster string, names []string) ([]string, error)
	// ReadIndex returns the binlog index and its ETag ("" when there is none).
	ReadIndex(ctx context.Context, cluster string) (*objectstore.Index, string, error)
	// UpdateIndex applies mutate to the current index and writes it conditionally, retrying on
	// conflict; it writes nothing when mutate changed nothing.
	UpdateIndex(ctx context.Context, cluster string, mutate func(*objectstore.Index) error) (*objectstore.Index, error)
}

var _ Store = (*objectstore.Client)(nil)
