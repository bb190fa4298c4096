package objectstore_test

import (
	"errors"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestBackupUploads lists the multipart uploads open in a cluster's backup directories (not
// its binlog directory's, not another cluster's) and aborts them; aborting one already gone
// succeeds and an upload outside its backup directory is refused.
func TestBackupUploads(t *testing.T) {
	s := s3test.Start(t)
	client := newClient(t, storeConfig(t, s, s.Endpoint, testPrefix), false)
	core := minio.Core{Client: s.Client()}
	open := func(key string) {
		if _, err := core.NewMultipartUpload(t.Context(), s.Bucket, key, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	inDir := objectstore.ArchiveKey(testPrefix, ref("alpha", "id1"), "tar.zst")
	open(inDir)
	open(objectstore.BinlogKey(testPrefix, testCluster, "binlog.000001"))
	open(objectstore.ClusterDir(testPrefix, "other") + "alpha/id1/backup.tar.zst")

	uploads, err := client.ListBackupUploads(t.Context(), testCluster)
	if err != nil || len(uploads) != 1 || uploads[0].Key != inDir || uploads[0].Ref != ref("alpha", "id1") ||
		uploads[0].Initiated.IsZero() {
		t.Fatalf("listed %+v, %v; want only the upload of %s with its start time", uploads, err, inDir)
	}
	if err := client.AbortBackupUploads(t.Context(), uploads); err != nil {
		t.Fatalf("aborting: %v", err)
	}
	checkNoUploads(t, s, objectstore.BackupDir(testPrefix, ref("alpha", "id1")), "after the abort")
	if err := client.AbortBackupUploads(t.Context(), uploads); err != nil {
		t.Errorf("aborting again: %v, want success", err)
	}
	stray := uploads[0]
	stray.Ref = ref("beta", "id1")
	if err := client.AbortBackupUploads(t.Context(), []objectstore.Upload{stray}); !errors.Is(err, objectstore.ErrInvalid) {
		t.Errorf("aborting an upload outside its backup directory: %v, want ErrInvalid", err)
	}
	left, err := client.ListBackupUploads(t.Context(), "other")
	if err != nil || len(left) != 1 {
		t.Errorf("the other cluster's uploads: %+v, %v; want its one upload untouched", left, err)
	}
}
