package retentionpass

import (
	"fmt"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// TestClassify is the table of what a complete directory is to a pass.
func TestClassify(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ref := objectstore.BackupRef{Cluster: "pc1", Name: "b", ID: "id"}
	md := func(ns string, size int64, stopped time.Time) *objectstore.Metadata {
		return &objectstore.Metadata{SchemaVersion: 1, Cluster: "pc1", Namespace: ns, BackupName: "b", BackupID: "id",
			Method: "clone", Format: "tar", Compression: "zstd", Size: size, StartedAt: stopped.Add(-time.Minute), StoppedAt: stopped}
	}
	dir := func(archive int64) objectstore.BackupEntry {
		e := objectstore.BackupEntry{Ref: ref, Complete: true, Keys: []string{"p/pc1/b/id/metadata.json"}, Sizes: []int64{300}}
		if archive >= 0 {
			e.Keys, e.Sizes = append([]string{"p/pc1/b/id/backup.tar.zst"}, e.Keys...), append([]int64{archive}, e.Sizes...)
		}
		return e
	}
	for _, tc := range []struct {
		rule      string
		namespace string
		entry     objectstore.BackupEntry
		read      metadataRead
		want      dirKind
		wantErr   bool
	}{
		{"a whole backup of this namespace", "team-a", dir(100), metadataRead{md: md("team-a", 100, now)}, dirBase, false},
		{"a backup without a namespace is this cluster's", "team-a", dir(100), metadataRead{md: md("", 100, now)}, dirBase, false},
		{"without a namespace of its own, the pass owns every backup", "", dir(100), metadataRead{md: md("team-b", 100, now)}, dirBase, false},
		{"another namespace's backup", "team-a", dir(100), metadataRead{md: md("team-b", 100, now)}, dirForeign, false},
		{"another namespace's backup, even without an archive", "team-a", dir(-1), metadataRead{md: md("team-b", 100, now)}, dirForeign, false},
		{"no archive", "team-a", dir(-1), metadataRead{md: md("team-a", 100, now)}, dirUnrestorable, false},
		{"an archive of another size", "team-a", dir(99), metadataRead{md: md("team-a", 100, now)}, dirUnrestorable, false},
		{"an archive of another format only", "team-a", func() objectstore.BackupEntry {
			e := dir(100)
			e.Keys[0] = "p/pc1/b/id/backup.tar"
			return e
		}(), metadataRead{md: md("team-a", 100, now)}, dirUnrestorable, false},
		{"completed within the clock slack", "team-a", dir(100), metadataRead{md: md("team-a", 100, now.Add(MaxClockAhead))}, dirBase, false},
		{"completed beyond the clock slack", "team-a", dir(100), metadataRead{md: md("team-a", 100, now.Add(MaxClockAhead+time.Second))}, dirUnreadable, false},
		{"invalid metadata", "team-a", dir(100), metadataRead{err: fmt.Errorf("decoding: %w", objectstore.ErrInvalid)}, dirUnreadable, false},
		{"metadata gone since the listing", "team-a", dir(100), metadataRead{err: fmt.Errorf("get: %w", objectstore.ErrNotFound)}, dirGone, false},
		{"any other read error fails the pass", "team-a", dir(100), metadataRead{err: fmt.Errorf("503")}, 0, true},
	} {
		got, err := classify(tc.entry, tc.read, Options{Now: now, Namespace: tc.namespace})
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: got %d, %v; want %d (error %v)", tc.rule, got, err, tc.want, tc.wantErr)
		}
	}
}
