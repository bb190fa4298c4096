package archive

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// ErrUnsafe is returned for an entry that could write outside the target directory or is not a
// directory or regular file.
var ErrUnsafe = errors.New("unsafe archive entry")

// decoderMaxWindow bounds the decoder's memory against a hostile stream.
const decoderMaxWindow = 64 << 20

// Unpack extracts a zstd-compressed tar stream from r into dir, which must exist. It never
// overwrites: an entry whose path exists fails. After the tar end marker it reads r to io.EOF,
// so that a verifying reader reports a checksum mismatch as an error here. On error, dir holds
// a partial extraction the caller must discard.
func Unpack(r io.Reader, dir string) error {
	dec, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(decoderMaxWindow))
	if err != nil {
		return fmt.Errorf("creating the zstd decoder: %w", err)
	}
	defer dec.Close()
	tr := tar.NewReader(dec)
	buf := make([]byte, 1<<20)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the archive: %w", err)
		}
		if err := extractEntry(tr, hdr, dir, buf); err != nil {
			return err
		}
	}
	if _, err := io.CopyBuffer(io.Discard, dec, buf); err != nil {
		return fmt.Errorf("reading the end of the archive: %w", err)
	}
	if _, err := io.CopyBuffer(io.Discard, r, buf); err != nil {
		return fmt.Errorf("reading the end of the archive: %w", err)
	}
	return nil
}

func extractEntry(tr *tar.Reader, hdr *tar.Header, dir string, buf []byte) error {
	target, err := safeTarget(dir, hdr.Name)
	if err != nil {
		return err
	}
	mode := os.FileMode(hdr.Mode).Perm()
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := os.Mkdir(target, mode|0o700); err != nil {
			return fmt.Errorf("extracting %s: %w", hdr.Name, err)
		}
		return nil
	case tar.TypeReg:
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode|0o600)
		if err != nil {
			return fmt.Errorf("extracting %s: %w", hdr.Name, err)
		}
		_, err = io.CopyBuffer(f, tr, buf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("extracting %s: %w", hdr.Name, err)
		}
		return nil
	}
	return fmt.Errorf("%w: %s has type %q", ErrUnsafe, hdr.Name, hdr.Typeflag)
}

// safeTarget maps an entry name to a path inside dir, refusing anything that could leave it.
func safeTarget(dir, name string) (string, error) {
	clean := path.Clean(strings.TrimSuffix(name, "/"))
	if name == "" || path.IsAbs(name) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") ||
		strings.Contains(name, "\\") || strings.Contains(name, "\x00") {
		return "", fmt.Errorf("%w: name %q", ErrUnsafe, name)
	}
	for _, seg := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if seg == ".." || seg == "" || seg == "." {
			return "", fmt.Errorf("%w: name %q", ErrUnsafe, name)
		}
	}
	return filepath.Join(dir, filepath.FromSlash(clean)), nil
}
