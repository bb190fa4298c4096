package objectstore_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestDeleteBackupDirs deletes listed directories in two bulk requests, every metadata.json
// before any archive, and leaves the other directories alone.
func TestDeleteBackupDirs(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.Start(t, s.Endpoint)
	client := newClient(t, storeConfig(t, s, proxy.URL, testPrefix), false)
	complete := seedBackups(t, s, client)
	entries, err := client.ListBackups(t.Context(), testCluster)
	if err != nil {
		t.Fatal(err)
	}
	var doomed []objectstore.BackupEntry
	for _, e := range entries {
		if e.Ref.Name != "zeta" {
			doomed = append(doomed, e)
		}
	}
	proxy.Reset()
	gone, err := client.DeleteBackupDirs(t.Context(), doomed)
	if err != nil || len(gone) != len(doomed) {
		t.Fatalf("deleted %v, %v; want all %d directories", gone, err, len(doomed))
	}
	if n, total := proxy.Count(s3proxy.DeleteObjects), proxy.Total(); n != 2 || total != 2 {
		t.Errorf("%d DeleteObjects requests of %d in all, want 2 and nothing else", n, total)
	}
	left, err := client.ListBackups(t.Context(), testCluster)
	if err != nil || len(left) != 1 || left[0].Ref != complete[len(complete)-1] {
		t.Errorf("left after the deletion: %+v, %v; want only zeta", left, err)
	}
	if n := len(keysOf(t, s, objectstore.BinlogDir(testPrefix, testCluster))); n != 50 {
		t.Errorf("%d binlog objects left, want all 50", n)
	}
}

// TestDeleteBackupDirsCutShort: when the request deleting the archives fails, the directories
// are left without metadata.json (incomplete), never with metadata and no archive; when the
// request deleting the metadata fails, nothing is deleted. A key the answer does not confirm
// (an answer cut short or with a key garbled) counts as not deleted.
func TestDeleteBackupDirsCutShort(t *testing.T) {
	actions := map[string]s3proxy.Action{"500": s3proxy.Status(500), "drop": s3proxy.Drop(),
		"lost answer": s3proxy.DropResponse(), "answer cut": s3proxy.CutResponseBody(300),
		"answer corrupt": s3proxy.CorruptResponseBody(200)}
	for name, action := range actions {
		for nth := 1; nth <= 2; nth++ {
			t.Run(fmt.Sprintf("%s at request %d", name, nth), func(t *testing.T) {
				s := s3test.Start(t)
				proxy := s3proxy.Start(t, s.Endpoint)
				client := newClient(t, storeConfig(t, s, proxy.URL, testPrefix), false)
				seedBackups(t, s, client)
				entries, err := client.ListBackups(t.Context(), testCluster)
				if err != nil {
					t.Fatal(err)
				}
				proxy.Reset()
				proxy.FailNth(nth, action)
				gone, err := client.DeleteBackupDirs(t.Context(), entries)
				if err == nil || len(gone) != 0 {
					t.Fatalf("deleted %v, %v; want an error and no directory confirmed gone", gone, err)
				}
				left, err := client.ListBackups(t.Context(), testCluster)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range left {
					if e.Complete && !slices.ContainsFunc(e.Keys, isArchive) {
						t.Errorf("%s/%s: metadata.json without an archive", e.Ref.Name, e.Ref.ID)
					}
				}
				if nth == 2 && slices.ContainsFunc(left, func(e objectstore.BackupEntry) bool { return e.Complete }) {
					t.Errorf("the metadata phase succeeded, yet complete directories remain: %+v", left)
				}
			})
		}
	}
}

func isArchive(key string) bool { return len(key) > 14 && key[len(key)-14:] == "backup.tar.zst" }

// TestDeleteSegments deletes segment objects in bulk (a missing one counts as deleted) and
// refuses the index's own name.
func TestDeleteSegments(t *testing.T) {
	s := s3test.Start(t)
	client := newClient(t, storeConfig(t, s, s.Endpoint, testPrefix), false)
	var names []string
	for i := range 2100 {
		names = append(names, fmt.Sprintf("binlog.%06d", i))
		if i%5 == 0 {
			writeDirect(t, s, objectstore.BinlogKey(testPrefix, testCluster, names[i]), []byte("x"))
		}
	}
	writeDirect(t, s, objectstore.BinlogKey(testPrefix, testCluster, "binlog.999999"), []byte("x"))
	deleted, err := client.DeleteSegments(t.Context(), testCluster, names)
	if err != nil || !slices.Equal(deleted, names) {
		t.Fatalf("deleted %d of %d, %v", len(deleted), len(names), err)
	}
	if left := keysOf(t, s, objectstore.BinlogDir(testPrefix, testCluster)); len(left) != 1 {
		t.Errorf("left %v, want only binlog.999999", left)
	}
	if _, err := client.DeleteSegments(t.Context(), testCluster, []string{objectstore.IndexName}); !errors.Is(err, objectstore.ErrInvalid) {
		t.Errorf("deleting the index as a segment: %v, want ErrInvalid", err)
	}
}

func keysOf(t *testing.T, s *s3test.Server, prefix string) []string {
	t.Helper()
	var keys []string
	for o := range s.Client().ListObjects(t.Context(), s.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}
