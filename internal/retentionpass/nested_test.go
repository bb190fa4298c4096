package retentionpass_test

import (
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestRunLeavesANestedClusterAlone: a Cluster whose path is "<path>/<cluster>" of another one
// (path "nest" for Cluster pc1, path "nest/pc1" for a second Cluster also named pc1) writes
// inside the first one's cluster directory. The first one's pass must not take the second one's
// backups, binlogs or open uploads for its own interrupted uploads.
func TestRunLeavesANestedClusterAlone(t *testing.T) {
	s := s3test.Start(t)
	written := time.Now().Truncate(time.Second)
	inner := seedFixture(t, s, "nest/"+testCluster, written)
	upload := objectstore.ArchiveKey(inner.prefix, ref("running", "id-running"), "tar.zst")
	core := minio.Core{Client: s.Client()}
	if _, err := core.NewMultipartUpload(t.Context(), s.Bucket, upload, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	outer := newClient(t, storeConfig(t, s, s.Endpoint, "nest"), true)
	report, err := retentionpass.Run(t.Context(), outer, testCluster, window30,
		retentionpass.Options{Now: inner.now.Add(time.Hour), IncompleteGrace: time.Hour})
	if err != nil {
		t.Fatalf("outer pass: %v", err)
	}
	if report.DeletedAnything() || len(report.Plan.Keep) != 0 {
		t.Errorf("the outer pass found or deleted the nested Cluster's objects: %+v", report)
	}
	var all []string
	for _, b := range fixtureBackups {
		all = append(all, b.name)
	}
	var segs []string
	for _, sg := range fixtureSegments {
		segs = append(segs, sg.name)
	}
	inner.checkOutcome(t, all, segs, "after the outer pass")
	if len(keysUnder(t, s, objectstore.BackupDir(inner.prefix, partialRef))) == 0 {
		t.Error("the nested Cluster's interrupted upload was deleted by the outer pass")
	}
	open := 0
	for u := range s.Client().ListIncompleteUploads(t.Context(), s.Bucket, inner.prefix+"/", true) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		open++
	}
	if open != 1 {
		t.Errorf("the nested Cluster's open upload: %d left, want 1", open)
	}
}
