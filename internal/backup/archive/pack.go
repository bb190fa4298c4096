package archive

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
)

// Extension is the archive extension this package produces and reads.
const Extension = "tar.zst"

// encoderConcurrency bounds the zstd encoder's goroutines (and its memory: a few MiB each).
const encoderConcurrency = 2

// Pack writes dir as a zstd-compressed tar stream to w. Names are relative to dir, with "/" as
// separator. It stops at the first error, including ctx ending between files.
func Pack(ctx context.Context, dir string, w io.Writer) error {
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(encoderConcurrency))
	if err != nil {
		return fmt.Errorf("creating the zstd encoder: %w", err)
	}
	tw := tar.NewWriter(enc)
	buf := make([]byte, 1<<20)
	walkErr := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := context.Cause(ctx); err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		return addEntry(tw, path, filepath.ToSlash(rel), d, buf)
	})
	if walkErr != nil {
		enc.Close()
		return fmt.Errorf("packing %s: %w", dir, walkErr)
	}
	if err := tw.Close(); err != nil {
		enc.Close()
		return fmt.Errorf("closing the tar stream: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("closing the zstd stream: %w", err)
	}
	return nil
}

func addEntry(tw *tar.Writer, path, name string, d fs.DirEntry, buf []byte) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	switch {
	case info.IsDir():
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/",
			Mode: int64(info.Mode().Perm()), ModTime: info.ModTime()})
	case info.Mode().IsRegular():
		return addFile(tw, path, name, info, buf)
	}
	return fmt.Errorf("%s is neither a directory nor a regular file (%s)", name, info.Mode().Type())
}

func addFile(tw *tar.Writer, path, name string, info fs.FileInfo, buf []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: info.Size(),
		Mode: int64(info.Mode().Perm()), ModTime: info.ModTime()}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	// A file that changed size while being read fails the copy: the snapshot must be quiescent.
	n, err := io.CopyBuffer(tw, io.LimitReader(f, info.Size()), buf)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if n != info.Size() {
		return fmt.Errorf("%s shrank from %d to %d bytes while being packed", name, info.Size(), n)
	}
	return nil
}
