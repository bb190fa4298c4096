package instance

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUnfinishedCloneIsDiscarded(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "mysql.ibd"), []byte("x"), 0o600))
	if done, err := DiscardUnfinishedClone(dir); done || err != nil {
		t.Fatalf("without the marker: discarded %v, %v", done, err)
	}
	if has, _ := HasData(dir); !has {
		t.Fatal("data without the marker was touched")
	}
	must(t, MarkClonePending(dir))
	must(t, os.MkdirAll(filepath.Join(dir, "#innodb_redo"), 0o700))
	if done, err := DiscardUnfinishedClone(dir); !done || err != nil {
		t.Fatalf("with the marker: discarded %v, %v", done, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d entries", len(entries))
	}
	must(t, MarkClonePending(dir))
	if was, err := ClearClonePending(dir); !was || err != nil {
		t.Errorf("clear: %v, %v", was, err)
	}
	if was, err := ClearClonePending(dir); was || err != nil {
		t.Errorf("clear again: %v, %v", was, err)
	}
}
