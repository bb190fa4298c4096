package retentionpass_test

import (
	"slices"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestRunKeepsTheNewestRestorableBackup: a directory with metadata.json but no archive, or an
// archive of another size than metadata.json records, cannot be restored. Were it the newest,
// count 1 would delete the last backup a restore can use. It is kept and reported, and is not
// part of the inventory: the newest restorable backup is the floor, and the binlog horizon is
// its start, so the segments before it are deleted as usual.
func TestRunKeepsTheNewestRestorableBackup(t *testing.T) {
	s := s3test.Start(t)
	f := seedFixture(t, s, "unrestorable", time.Now().Truncate(time.Second))
	noArchive, short := backupSpec{"x-noarchive", 6 * time.Hour}, backupSpec{"x-short", 12 * time.Hour}
	for _, b := range []backupSpec{noArchive, short} {
		uploadBackup(t, f.direct, b, f.now)
	}
	archive := func(b backupSpec) string { return objectstore.ArchiveKey(f.prefix, b.ref(), "tar.zst") }
	if err := s.Client().RemoveObject(t.Context(), s.Bucket, archive(noArchive), minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	putObject(t, s, archive(short), []byte("truncated"))

	report, err := retentionpass.Run(t.Context(), f.direct, testCluster, retention.Policy{Count: 1},
		retentionpass.Options{Now: f.now, IncompleteGrace: time.Hour})
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	f.checkOutcome(t, []string{"b01"}, []string{segName(7)}, "after the pass")
	for _, b := range []backupSpec{noArchive, short} {
		if !objectExists(t, s, objectstore.MetadataKey(f.prefix, b.ref())) {
			t.Errorf("the metadata.json of %s was deleted", b.name)
		}
	}
	if got := names(report.Unrestorable); !slices.Equal(got, []string{"x-noarchive", "x-short"}) {
		t.Errorf("report: unrestorable %v, want x-noarchive and x-short", got)
	}
	if len(report.Unreadable) != 0 {
		t.Errorf("report: unreadable %v, want none", report.Unreadable)
	}
}
