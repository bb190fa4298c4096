package instance

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The data directory is a subdirectory of the instance's volume, never its root: a fresh ext4 (or
// xfs with some provisioners) volume holds lost+found, and mysqld --initialize refuses a data
// directory that is not empty.
const (
	// lostAndFound is left where the filesystem made it.
	lostAndFound = "lost+found"
	// migratingDir receives a data directory found at the volume's root, entry by entry, before it
	// is renamed to the data directory. Its name holds a '.', which mysqld encodes in the
	// directories of schemas (@002e), so no schema can have it.
	migratingDir = ".datadir-migrating"
)

// DataDirLayout is what PrepareDataDir found on the volume.
type DataDirLayout string

const (
	// LayoutSubdirectory: the data directory is (or will be made) a subdirectory of the volume.
	LayoutSubdirectory DataDirLayout = "subdirectory"
	// LayoutMigrated: a data directory found at the volume's root (the layout of earlier versions)
	// was moved into the subdirectory, or an interrupted move was finished.
	LayoutMigrated DataDirLayout = "migrated"
)

// PrepareDataDir makes dataDir, a direct subdirectory of the volume mounted at volume, ready for
// mysqld. A data directory at the volume's root (mysql.ibd there: the layout of earlier versions)
// is moved into dataDir first: every entry but lost+found is renamed into a staging directory,
// which is then renamed to dataDir. Renames stay on the volume's filesystem and are atomic, and
// the staging directory marks the move as under way, so a crash at any point is finished at the
// next start and no file is ever copied or lost. A schema named like dataDir's base name is
// moved with the others before the rename, so it cannot clash.
func PrepareDataDir(volume, dataDir string) (DataDirLayout, error) {
	volume, dataDir = filepath.Clean(volume), filepath.Clean(dataDir)
	if filepath.Dir(dataDir) != volume {
		return "", fmt.Errorf("%w: the data directory %s is not a subdirectory of the volume %s", errRunConfig, dataDir, volume)
	}
	staging := filepath.Join(volume, migratingDir)
	migrating, err := exists(staging)
	if err != nil {
		return "", err
	}
	if !migrating {
		legacy, err := exists(filepath.Join(volume, "mysql.ibd"))
		if err != nil {
			return "", err
		}
		if !legacy {
			if err := os.MkdirAll(dataDir, 0o750); err != nil {
				return "", fmt.Errorf("creating the data directory: %w", err)
			}
			return LayoutSubdirectory, nil
		}
		if err := os.Mkdir(staging, 0o750); err != nil {
			return "", fmt.Errorf("moving the data directory off the volume's root: %w", err)
		}
	}
	if err := moveEntries(volume, staging); err != nil {
		return "", err
	}
	if err := os.Rename(staging, dataDir); err != nil {
		return "", fmt.Errorf("moving the data directory off the volume's root: %w", err)
	}
	if err := syncDir(volume); err != nil {
		return "", err
	}
	return LayoutMigrated, nil
}

// moveEntries renames every entry of volume but lost+found and the staging directory into staging.
func moveEntries(volume, staging string) error {
	entries, err := os.ReadDir(volume)
	if err != nil {
		return fmt.Errorf("reading the volume: %w", err)
	}
	for _, e := range entries {
		if e.Name() == lostAndFound || e.Name() == migratingDir {
			continue
		}
		if err := os.Rename(filepath.Join(volume, e.Name()), filepath.Join(staging, e.Name())); err != nil {
			return fmt.Errorf("moving the data directory off the volume's root: %w", err)
		}
	}
	return syncDir(staging)
}

// exists reports whether path names a file (a symbolic link is not followed).
func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("inspecting %s: %w", path, err)
}

// syncDir makes the renames into dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
