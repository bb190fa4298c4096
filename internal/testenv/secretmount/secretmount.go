// Package secretmount writes files the way the kubelet updates a mounted Secret: each version in a
// new hidden directory, the files symlinks through ..data, and ..data swapped atomically to the
// new version, so a reader sees either the old files or the new ones.
package secretmount

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
)

var seq atomic.Int64

// Write makes data (file name to content) the content of the mount at dir.
func Write(dir string, data map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	version := filepath.Join(dir, fmt.Sprintf("..%d_%d", os.Getpid(), seq.Add(1)))
	if err := os.Mkdir(version, 0o755); err != nil {
		return err
	}
	for name, b := range data {
		if err := os.WriteFile(filepath.Join(version, name), b, 0o600); err != nil {
			return err
		}
	}
	link := filepath.Join(dir, "..data")
	old, _ := os.Readlink(link)
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(version), tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, link); err != nil {
		return fmt.Errorf("swapping ..data: %w", err)
	}
	for name := range data {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", name), p); err != nil {
				return err
			}
		}
	}
	if old != "" {
		return os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}
