package verify

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// ErrReadOnly: a verification tried to write to the object store.
var ErrReadOnly = errors.New("a verification never writes to the object store")

// readOnly is a Store whose every write fails: what a verification reads through.
type readOnly struct{ objectstore.Store }

// ReadOnly wraps s so that every write it would make fails with ErrReadOnly.
func ReadOnly(s objectstore.Store) objectstore.Store { return readOnly{s} }

func refused(op string) error { return fmt.Errorf("%s: %w", op, ErrReadOnly) }

func (readOnly) UploadBackup(context.Context, objectstore.UploadRequest) (*objectstore.Metadata, error) {
	return nil, refused("uploading a backup")
}

func (readOnly) DeleteBackup(context.Context, objectstore.BackupRef) error {
	return refused("deleting a backup")
}

func (readOnly) DeleteBackupDirs(context.Context, []objectstore.BackupEntry) ([]objectstore.BackupRef, error) {
	return nil, refused("deleting backups")
}

func (readOnly) DeleteSegments(context.Context, string, []string) ([]string, error) {
	return nil, refused("deleting binlog segments")
}

func (readOnly) AbortBackupUploads(context.Context, []objectstore.Upload) error {
	return refused("aborting uploads")
}

func (readOnly) WriteIndex(context.Context, string, *objectstore.Index, string) (string, error) {
	return "", refused("writing the binlog index")
}

func (readOnly) UpdateIndex(context.Context, string, func(*objectstore.Index) error) (*objectstore.Index, error) {
	return nil, refused("updating the binlog index")
}
