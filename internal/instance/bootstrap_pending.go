package instance

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// clonePendingMarker, in the data directory, marks one initialized for a clone, or being
// restored from a backup (recovery_run.go), that has not finished: it has never served and holds
// nothing worth keeping.
const clonePendingMarker = ".cnm-clone-pending"

// MarkClonePending records that dataDir awaits a clone.
func MarkClonePending(dataDir string) error {
	if err := os.WriteFile(filepath.Join(dataDir, clonePendingMarker), nil, 0o600); err != nil {
		return fmt.Errorf("marking the clone pending: %w", err)
	}
	return nil
}

// ClearClonePending removes the marker once the clone is complete; it reports whether the marker
// was still there.
func ClearClonePending(dataDir string) (bool, error) {
	err := os.Remove(filepath.Join(dataDir, clonePendingMarker))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("clearing the clone marker: %w", err)
}

// DiscardUnfinishedClone empties dataDir when it carries the marker, so that bootstrap is decided
// again from an empty data directory rather than starting on an initialized one that never got
// the donor's data. It reports whether it did.
func DiscardUnfinishedClone(dataDir string) (bool, error) {
	if marked, err := exists(filepath.Join(dataDir, clonePendingMarker)); err != nil || !marked {
		return false, err
	}
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return false, fmt.Errorf("reading the data directory: %w", err)
	}
	for _, e := range entries {
		if e.Name() == clonePendingMarker {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dataDir, e.Name())); err != nil {
			return false, fmt.Errorf("discarding an unfinished clone: %w", err)
		}
	}
	// The marker goes last: a crash before this point discards again at the next start.
	_, err = ClearClonePending(dataDir)
	return err == nil, err
}
