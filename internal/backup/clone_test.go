package backup_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestCloneBackup runs the clone method against a real mysqld and a real S3 server; the source and
// the S3 server are shared by the subtests.
func TestCloneBackup(t *testing.T) {
	src := startSource(t)
	s3 := s3test.Start(t)
	t.Run("a backup restores into a new data directory with identical tables and GTIDs", func(t *testing.T) {
		testRoundTrip(t, src, s3)
	})
	t.Run("a fault at every S3 call fails the backup and leaves nothing", func(t *testing.T) {
		testFaultAtEveryS3Call(t, src, s3)
	})
}

// testRoundTrip backs up with CLONE and restores into a new data directory: same checksums for
// every table, same gtid_executed.
func testRoundTrip(t *testing.T, src *source, s3 *s3test.Server) {
	store := backuptest.Store(t, s3, s3.Endpoint, "backups")
	wantSums, wantGTID := src.checksums(t)
	ref := objectstore.BackupRef{Cluster: "pc1", Name: "nightly", ID: "20260101000000"}

	begin := time.Now()
	md, err := backup.Run(t.Context(), store, ref, backup.Owner{Namespace: "team-a"}, src.producer(t))
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	t.Logf("backup: %d bytes in %s, gtid %s, binlog %s:%d, version %s", md.Size,
		time.Since(begin).Round(time.Millisecond), md.GTIDExecuted, md.BinlogFile, md.BinlogPosition, md.ServerVersion)
	if !gtid.MustParse(md.GTIDExecuted).Equal(gtid.MustParse(wantGTID)) {
		t.Errorf("metadata gtidExecuted %q, source had %q", md.GTIDExecuted, wantGTID)
	}
	if md.Namespace != "team-a" {
		t.Errorf("metadata namespace %q, want team-a", md.Namespace)
	}
	if md.BinlogFile == "" || md.BinlogPosition == 0 || md.ServerVersion == "" {
		t.Errorf("metadata lacks coordinates: %+v", md)
	}
	// Writes after the backup are not in it.
	src.write(t, 300, 310)

	ok := t.Run("restore into an empty data directory gives the same tables and GTIDs", func(t *testing.T) {
		scratch := backuptest.Scratch(t, src.mysqld)
		dataDir := filepath.Join(scratch, "data")
		got, err := restore.Restore(t.Context(), restore.Config{Store: store, Ref: ref, DataDir: dataDir,
			RunDir: filepath.Join(scratch, "run"), Mysqld: src.mysqld})
		if err != nil {
			t.Fatalf("restore: %v", err)
		}
		if got.SHA256 != md.SHA256 {
			t.Errorf("restored sha256 %s, backed up %s", got.SHA256, md.SHA256)
		}
		sums, executed := restoredChecksums(t.Context(), t, src.mysqld, dataDir)
		if !maps.Equal(sums, wantSums) || len(sums) != 3 {
			t.Errorf("checksums differ:\nrestored %v\nsource   %v", sums, wantSums)
		}
		if !gtid.MustParse(executed).Equal(gtid.MustParse(wantGTID)) {
			t.Errorf("restored gtid_executed %q, source had %q at the backup", executed, wantGTID)
		}
	})
	t.Run("restore refuses a data directory that is not empty", func(t *testing.T) {
		dataDir := filepath.Join(backuptest.Scratch(t, src.mysqld), "data")
		check.Must(t, os.MkdirAll(dataDir, 0o750))
		check.Must(t, os.WriteFile(filepath.Join(dataDir, "ibdata1"), []byte("precious"), 0o640))
		_, err := restore.Restore(t.Context(), restore.Config{Store: store, Ref: ref, DataDir: dataDir,
			RunDir: filepath.Join(dataDir, "..", "run"), Mysqld: src.mysqld})
		if !errors.Is(err, restore.ErrNotEmpty) {
			t.Fatalf("got %v, want ErrNotEmpty", err)
		}
		if b, _ := os.ReadFile(filepath.Join(dataDir, "ibdata1")); string(b) != "precious" {
			t.Error("the existing file was touched")
		}
	})
	if ok {
		t.Run("restore refuses an archive whose sha256 differs and leaves the directory empty", func(t *testing.T) {
			testCorruptArchive(t, src, s3, store, ref, md)
		})
	}
}

func testCorruptArchive(t *testing.T, src *source, s3 *s3test.Server, store *objectstore.Client,
	ref objectstore.BackupRef, md *objectstore.Metadata,
) {
	// versitygw's posix backend keeps each object as a plain file.
	objectPath := func(key string) string { return filepath.Join(s3.Dir, s3.Bucket, filepath.FromSlash(key)) }
	for _, tc := range []struct {
		name string
		key  string
		edit func([]byte) []byte
	}{
		{"a byte of the archive flipped", objectstore.ArchiveKey("backups", ref, "tar.zst"), func(b []byte) []byte {
			b[len(b)/2] ^= 0x5a
			return b
		}},
		{"metadata.json records another sha256", objectstore.MetadataKey("backups", ref), func(b []byte) []byte {
			return []byte(strings.Replace(string(b), md.SHA256, strings.Repeat("ab", 32), 1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := objectPath(tc.key)
			orig, err := os.ReadFile(path)
			check.Must(t, err)
			check.Must(t, os.WriteFile(path, tc.edit(append([]byte(nil), orig...)), 0o644))
			defer func() { check.Must(t, os.WriteFile(path, orig, 0o644)) }()
			dataDir := filepath.Join(backuptest.Scratch(t, src.mysqld), "data")
			_, err = restore.Restore(t.Context(), restore.Config{Store: store, Ref: ref, DataDir: dataDir,
				RunDir: filepath.Join(dataDir, "..", "run"), Mysqld: src.mysqld})
			if err == nil {
				t.Fatal("restore of a corrupted backup succeeded")
			}
			t.Logf("refused: %v", err)
			if entries, _ := os.ReadDir(dataDir); len(entries) != 0 {
				t.Errorf("the data directory holds %d entries after a refused restore", len(entries))
			}
		})
	}
}
