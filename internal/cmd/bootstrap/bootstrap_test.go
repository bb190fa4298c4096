package bootstrap

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestCopyExecutableCopiesBytesAndMode(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	want := bytes.Repeat([]byte("manager"), 100000)
	if err := os.WriteFile(src, want, 0o600); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(dir, "dest")
	if err := CopyExecutable(src, dest); err != nil {
		t.Fatalf("CopyExecutable: %v", err)
	}
	got, err := os.ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("copied %d bytes, want %d identical bytes", len(got), len(want))
	}
	st, _ := os.Stat(dest)
	if st.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v, want 0755", st.Mode().Perm())
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".manager-*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
}

func TestCopyExecutableFailsOnMissingDestinationDir(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CopyExecutable(src, filepath.Join(dir, "missing", "dest")); err == nil {
		t.Fatal("want an error for a missing destination directory")
	}
}
