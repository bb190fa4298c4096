package objectstore_test

import (
	"errors"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

func TestLayoutKeys(t *testing.T) {
	r := objectstore.BackupRef{Cluster: "pc1", Name: "nightly", ID: "20260301T120000Z"}
	for _, tc := range []struct {
		rule, got, want string
	}{
		{"backup dir with a prefix", objectstore.BackupDir("backups/prod", r), "backups/prod/pc1/nightly/20260301T120000Z/"},
		{"backup dir without a prefix has no leading slash", objectstore.BackupDir("", r), "pc1/nightly/20260301T120000Z/"},
		{"archive is backup.<ext>", objectstore.ArchiveKey("p", r, "tar.zst"), "p/pc1/nightly/20260301T120000Z/backup.tar.zst"},
		{"metadata.json next to it", objectstore.MetadataKey("", r), "pc1/nightly/20260301T120000Z/metadata.json"},
		{"cluster dir", objectstore.ClusterDir("", "pc1"), "pc1/"},
		{"binlogs under the cluster", objectstore.BinlogDir("p", "pc1"), "p/pc1/binlogs/"},
		{"binlog segment", objectstore.BinlogKey("", "pc1", "binlog.000001"), "pc1/binlogs/binlog.000001"},
		{"binlog index", objectstore.IndexKey("a/b", "pc1"), "a/b/pc1/binlogs/_index.json"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.rule, tc.got, tc.want)
		}
	}
}

func TestBackupRefValidate(t *testing.T) {
	for _, tc := range []struct {
		rule string
		ref  objectstore.BackupRef
		ok   bool
	}{
		{"kubernetes names and a timestamp id", objectstore.BackupRef{Cluster: "pc1", Name: "nightly.2026-03-01", ID: "20260301T120000Z_a"}, true},
		{"empty id", objectstore.BackupRef{Cluster: "pc1", Name: "n"}, false},
		{"slash in a name", objectstore.BackupRef{Cluster: "pc1", Name: "a/b", ID: "1"}, false},
		{"dot-dot id", objectstore.BackupRef{Cluster: "pc1", Name: "n", ID: ".."}, false},
		{"a backup named binlogs would collide with the binlog directory", objectstore.BackupRef{Cluster: "pc1", Name: "binlogs", ID: "1"}, false},
		{"space in the cluster", objectstore.BackupRef{Cluster: "p c", Name: "n", ID: "1"}, false},
	} {
		err := tc.ref.Validate()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, objectstore.ErrInvalid)) {
			t.Errorf("%s: got %v, want ok=%t", tc.rule, err, tc.ok)
		}
	}
}

func TestParseBackupDir(t *testing.T) {
	r := objectstore.BackupRef{Cluster: "pc1", Name: "nightly", ID: "id1"}
	for _, prefix := range []string{"", "backups", "a/b/c"} {
		gotPrefix, gotRef, err := objectstore.ParseBackupDir(objectstore.BackupDir(prefix, r))
		if err != nil || gotPrefix != prefix || gotRef != r {
			t.Errorf("prefix %q: got %q, %+v, %v", prefix, gotPrefix, gotRef, err)
		}
	}
	for _, bad := range []string{"", "pc1/nightly/id1", "nightly/id1/", "/pc1/nightly/id1/", "a//pc1/nightly/id1/", "pc1/binlogs/x/"} {
		if _, _, err := objectstore.ParseBackupDir(bad); !errors.Is(err, objectstore.ErrInvalid) {
			t.Errorf("%q: got %v, want ErrInvalid", bad, err)
		}
	}
}

func TestArchiveExtension(t *testing.T) {
	for _, tc := range []struct{ format, compression, want string }{
		{"tar", "zstd", "tar.zst"}, {"tar", "none", "tar"}, {"xbstream", "none", "xbstream"},
		{"xbstream", "zstd", "xbstream.zst"}, {"zip", "none", ""}, {"tar", "gzip", ""}, {"tar", "", ""},
	} {
		got, err := objectstore.ArchiveExtension(tc.format, tc.compression)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("%s/%s: got %q, %v; want %q", tc.format, tc.compression, got, err, tc.want)
		}
	}
}
