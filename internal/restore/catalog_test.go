package restore_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestCatalogReadsEachMetadataOnce lists the backups of a cluster in a real S3 server again and
// again: each metadata.json is read once, a deleted backup leaves the list, a new one joins it.
func TestCatalogReadsEachMetadataOnce(t *testing.T) {
	s3 := s3test.Start(t)
	proxy := s3proxy.Start(t, s3.Endpoint)
	store := backuptest.Store(t, s3, proxy.URL, "cat")
	upload := func(id string) objectstore.BackupRef {
		ref := objectstore.BackupRef{Cluster: "c1", Name: "nightly", ID: id}
		body := []byte("archive " + id)
		sum := sha256.Sum256(body)
		_, err := store.UploadBackup(t.Context(), objectstore.UploadRequest{Backup: ref, Namespace: "ns", Method: "clone",
			Format: objectstore.FormatTar, Compression: objectstore.CompressionZstd, Archive: bytes.NewReader(body),
			Finish: func() (objectstore.ProducerResult, error) {
				return objectstore.ProducerResult{Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:]),
					GTIDExecuted: "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa:1-5", ServerVersion: "9.7", StartedAt: time.Now(), StoppedAt: time.Now()}, nil
			}})
		check.Must(t, err)
		return ref
	}
	first := upload("1")
	upload("2")
	catalog := &restore.Catalog{Store: store, Cluster: "c1"}
	list := func(want int) int {
		t.Helper()
		gets := proxy.Count(s3proxy.GetObject)
		got, err := catalog.List(t.Context())
		check.Must(t, err)
		if len(got) != want {
			t.Fatalf("%d backups listed, want %d", len(got), want)
		}
		return proxy.Count(s3proxy.GetObject) - gets
	}
	if reads := list(2); reads != 2 {
		t.Fatalf("the first listing read %d metadata.json, want 2", reads)
	}
	if reads := list(2); reads != 0 {
		t.Fatalf("the second listing read %d metadata.json, want none", reads)
	}
	check.Must(t, store.DeleteBackup(t.Context(), first))
	if reads := list(1); reads != 0 {
		t.Fatalf("after a deletion the listing read %d metadata.json, want none", reads)
	}
	upload("3")
	if reads := list(2); reads != 1 {
		t.Fatalf("after a new backup the listing read %d metadata.json, want 1", reads)
	}
}
