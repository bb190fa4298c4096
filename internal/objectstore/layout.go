package objectstore

import (
	"fmt"
	"strings"
)

const (
	// MetadataName is the object that marks a backup complete; it is written last.
	MetadataName = "metadata.json"
	// BinlogDirName is the directory of archived binary logs under a cluster's directory; no
	// backup may be named after it.
	BinlogDirName = "binlogs"
	// IndexName is the binlog index inside the binlog directory.
	IndexName = "_index.json"

	archiveBase = "backup."
)

// BackupRef names one backup in the object store: its cluster, its Backup object's name and the
// backup id that makes the directory unique.
type BackupRef struct {
	Cluster string
	Name    string
	ID      string
}

// Validate checks that each part is a single, safe path segment and that the backup name is not
// the binlog directory's.
func (r BackupRef) Validate() error {
	for _, part := range []struct{ what, value string }{
		{"cluster", r.Cluster}, {"backup name", r.Name}, {"backup id", r.ID},
	} {
		if err := checkSegment(part.value); err != nil {
			return fmt.Errorf("%w: %s %q: %w", ErrInvalid, part.what, part.value, err)
		}
	}
	if r.Name == BinlogDirName {
		return fmt.Errorf("%w: backup name %q is reserved for the binary log directory", ErrInvalid, r.Name)
	}
	return nil
}

// checkSegment accepts a non-empty path segment of letters, digits, '-', '_' and '.', other
// than "." and "..".
func checkSegment(s string) error {
	if s == "" || s == "." || s == ".." {
		return fmt.Errorf("empty, \".\" or \"..\"")
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.'
		if !ok {
			return fmt.Errorf("character %q is not allowed", c)
		}
	}
	return nil
}

// joinKey joins non-empty parts with "/", so an empty prefix yields no leading slash.
func joinKey(parts ...string) string {
	kept := make([]string, 0, len(parts))
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "/")
}

// ClusterDir returns "<prefix>/<cluster>/".
func ClusterDir(prefix, cluster string) string { return joinKey(prefix, cluster) + "/" }

// BackupDir returns "<prefix>/<cluster>/<name>/<id>/", the DestinationPath of a Backup.
func BackupDir(prefix string, ref BackupRef) string {
	return joinKey(prefix, ref.Cluster, ref.Name, ref.ID) + "/"
}

// MetadataKey returns the key of a backup's metadata.json.
func MetadataKey(prefix string, ref BackupRef) string { return BackupDir(prefix, ref) + MetadataName }

// ArchiveKey returns the key of a backup's archive, "backup.<ext>" in its directory.
func ArchiveKey(prefix string, ref BackupRef, ext string) string {
	return BackupDir(prefix, ref) + archiveBase + ext
}

// BinlogDir returns "<prefix>/<cluster>/binlogs/".
func BinlogDir(prefix, cluster string) string { return joinKey(prefix, cluster, BinlogDirName) + "/" }

// BinlogKey returns the key of an archived binlog segment.
func BinlogKey(prefix, cluster, segment string) string { return BinlogDir(prefix, cluster) + segment }

// IndexKey returns the key of a cluster's binlog index.
func IndexKey(prefix, cluster string) string { return BinlogDir(prefix, cluster) + IndexName }

// ParseBackupDir splits a backup directory ("<prefix>/<cluster>/<name>/<id>/", as recorded in a
// Backup's status) into its prefix and reference.
func ParseBackupDir(dir string) (string, BackupRef, error) {
	parts := strings.Split(strings.TrimSuffix(dir, "/"), "/")
	if !strings.HasSuffix(dir, "/") || len(parts) < 3 {
		return "", BackupRef{}, fmt.Errorf("%w: %q is not a backup directory <path>/<cluster>/<name>/<id>/", ErrInvalid, dir)
	}
	n := len(parts)
	ref := BackupRef{Cluster: parts[n-3], Name: parts[n-2], ID: parts[n-1]}
	if err := ref.Validate(); err != nil {
		return "", BackupRef{}, err
	}
	raw := strings.Join(parts[:n-3], "/")
	prefix, err := normalizePath(raw)
	if err != nil || prefix != raw || strings.HasPrefix(dir, "/") {
		return "", BackupRef{}, fmt.Errorf("%w: %q is not a backup directory <path>/<cluster>/<name>/<id>/", ErrInvalid, dir)
	}
	return prefix, ref, nil
}
