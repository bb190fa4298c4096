package archive_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/archive"
)

func TestPackUnpackRoundTrip(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"ibdata1":                "system tablespace",
		"#innodb_redo/#ib_redo0": "redo",
		"app/t.ibd":              string(bytes.Repeat([]byte("row"), 100000)),
		"mysql.ibd":              "",
		"deep/er/still/file.ibd": "x",
	}
	for name, content := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(src, "empty"), 0o750); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := archive.Pack(t.Context(), src, &buf); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := archive.Unpack(bytes.NewReader(buf.Bytes()), dst); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != content {
			t.Errorf("%s: %d bytes, %v", name, len(got), err)
		}
	}
	if info, err := os.Stat(filepath.Join(dst, "empty")); err != nil || !info.IsDir() {
		t.Errorf("empty directory not restored: %v", err)
	}
	// Unpacking again into the same directory never overwrites.
	if err := archive.Unpack(bytes.NewReader(buf.Bytes()), dst); err == nil {
		t.Error("unpacking over existing files succeeded")
	}
}

func TestPackRefusesSymlinks(t *testing.T) {
	src := t.TempDir()
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := archive.Pack(t.Context(), src, &bytes.Buffer{}); err == nil {
		t.Fatal("packed a symlink")
	}
}

func TestUnpackRefusesUnsafeEntries(t *testing.T) {
	for _, tc := range []struct {
		name string
		hdr  tar.Header
	}{
		{"absolute path", tar.Header{Name: "/etc/x", Typeflag: tar.TypeReg}},
		{"parent directory", tar.Header{Name: "../x", Typeflag: tar.TypeReg}},
		{"parent inside", tar.Header{Name: "a/../../x", Typeflag: tar.TypeReg}},
		{"symlink", tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc"}},
		{"hard link", tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "x"}},
		{"device", tar.Header{Name: "d", Typeflag: tar.TypeChar}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var raw bytes.Buffer
			enc, _ := zstd.NewWriter(&raw)
			tw := tar.NewWriter(enc)
			hdr := tc.hdr
			hdr.Mode = 0o644
			if err := tw.WriteHeader(&hdr); err != nil {
				t.Fatal(err)
			}
			tw.Close()
			enc.Close()
			err := archive.Unpack(&raw, t.TempDir())
			if !errors.Is(err, archive.ErrUnsafe) {
				t.Fatalf("got %v, want ErrUnsafe", err)
			}
		})
	}
}

func TestUnpackReadsToTheEnd(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("data"), 0o640); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := archive.Pack(t.Context(), src, &buf); err != nil {
		t.Fatal(err)
	}
	r := &endReader{r: bytes.NewReader(buf.Bytes())}
	if err := archive.Unpack(r, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if !r.eof {
		t.Error("Unpack returned before its input reached EOF")
	}
}

type endReader struct {
	r   *bytes.Reader
	eof bool
}

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.eof = true
	}
	return n, err
}
