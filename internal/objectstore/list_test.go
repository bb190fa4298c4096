package objectstore_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// seedBackups fills a cluster directory with complete backups whose names sort around the
// binlog directory, an interrupted upload, stray objects and binlog segments.
func seedBackups(t *testing.T, s *s3test.Server, client *objectstore.Client) []objectstore.BackupRef {
	t.Helper()
	// "binlogs-a" and "binlogs.b" sort before "binlogs/", "binlogsz" after it.
	complete := []objectstore.BackupRef{ref("alpha", "id1"), ref("alpha", "id2"), ref("binlogs-a", "id1"),
		ref("binlogs.b", "id1"), ref("binlogsz", "id1"), ref("zeta", "id1")}
	for i, r := range complete {
		if _, err := client.UploadBackup(t.Context(), request(r, newProducer(uint64(10+i), 100+int64(i)))); err != nil {
			t.Fatal(err)
		}
	}
	dir := objectstore.ClusterDir(testPrefix, testCluster)
	writeDirect(t, s, dir+"broken/id9/backup.tar.zst", []byte("interrupted upload")) // no metadata
	writeDirect(t, s, dir+"stray-object", []byte("not in a backup directory"))
	writeDirect(t, s, objectstore.ClusterDir(testPrefix, "other")+"alpha/id1/metadata.json", []byte("{}"))
	for i := range 50 {
		writeDirect(t, s, objectstore.BinlogKey(testPrefix, testCluster, fmt.Sprintf("binlog.%06d", i)), []byte("x"))
	}
	return complete
}

func TestListBackups(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.Start(t, s.Endpoint)
	client := newClient(t, storeConfig(t, s, proxy.URL, testPrefix), false)
	seedBackups(t, s, client)
	// A Cluster whose path nests in this cluster's directory: none of it is this cluster's.
	dir := objectstore.ClusterDir(testPrefix, testCluster)
	for _, k := range []string{"inner/daily/id1/backup.tar.zst", "inner/daily/id1/metadata.json",
		"inner/binlogs/_index.json", "inner/binlogs/binlog.000001", "alpha/id1/inner/backup.tar.zst"} {
		writeDirect(t, s, dir+k, []byte("another cluster's"))
	}

	proxy.Reset()
	entries, err := client.ListBackups(t.Context(), testCluster)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, fmt.Sprintf("%s/%s complete=%t keys=%d", e.Ref.Name, e.Ref.ID, e.Complete, len(e.Keys)))
		if e.Size <= 0 || e.LastModified.IsZero() {
			t.Errorf("%+v: no size or modification time", e)
		}
		if size, ok := e.ArchiveSize("tar.zst"); !ok || len(e.Sizes) != len(e.Keys) || (e.Complete && size != e.Size-e.Sizes[len(e.Sizes)-1]) {
			t.Errorf("%s/%s: archive size %d, %v; sizes %v of keys %v", e.Ref.Name, e.Ref.ID, size, ok, e.Sizes, e.Keys)
		}
		if _, ok := e.ArchiveSize("tar"); ok {
			t.Errorf("%s/%s: an archive backup.tar found among %v", e.Ref.Name, e.Ref.ID, e.Keys)
		}
	}
	want := []string{
		"alpha/id1 complete=true keys=2", "alpha/id2 complete=true keys=2", "binlogs-a/id1 complete=true keys=2",
		"binlogs.b/id1 complete=true keys=2", "binlogsz/id1 complete=true keys=2", "broken/id9 complete=false keys=1",
		"zeta/id1 complete=true keys=2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("listed\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// Two listings: up to the binlog directory, then from right after it.
	lists := proxy.Requests()
	if len(lists) != 2 || !strings.Contains(lists[1].Query, "start-after="+url.QueryEscape(dir+"binlogs0")) {
		t.Errorf("listing made %v, want two listings, the second starting after %sbinlogs0", lists, dir)
	}
}

func TestDeleteBackup(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.Start(t, s.Endpoint)
	client := newClient(t, storeConfig(t, s, proxy.URL, testPrefix), false)
	complete := seedBackups(t, s, client)
	ctx := t.Context()

	// An open multipart upload in a directory goes with it.
	open := client.BackupDir(ref("alpha", "id1")) + "backup.tar.zst"
	core := minio.Core{Client: s.Client()}
	if _, err := core.NewMultipartUpload(ctx, s.Bucket, open, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.DeleteBackup(ctx, ref("alpha", "id1")); err != nil {
		t.Fatalf("delete: %v", err)
	}
	checkNothingLeft(t, s, client.BackupDir(ref("alpha", "id1")), "deleted backup")
	if err := client.DeleteBackup(ctx, ref("alpha", "id1")); err != nil {
		t.Errorf("deleting it again: %v", err)
	}
	for _, r := range complete[1:] {
		if _, err := client.DownloadBackup(ctx, r, io.Discard); err != nil {
			t.Errorf("%+v after deleting alpha/id1: %v", r, err)
		}
	}

	// A deletion cut short leaves an incomplete backup, never metadata without its archive.
	proxy.Reset()
	deletes := 0
	proxy.Inject(s3proxy.Fault{Match: func(r s3proxy.Request) bool {
		if r.Kind == s3proxy.DeleteObject {
			deletes++
		}
		return r.Kind == s3proxy.DeleteObject && deletes == 2
	}, Action: s3proxy.Status(http.StatusInternalServerError), Times: 1})
	if err := client.DeleteBackup(ctx, ref("zeta", "id1")); err == nil {
		t.Error("delete with a failing archive removal succeeded")
	}
	if _, err := client.ReadMetadata(ctx, ref("zeta", "id1")); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("metadata after a failed delete: got %v, want ErrNotFound", err)
	}
	entries, err := client.ListBackups(ctx, testCluster)
	if err != nil {
		t.Fatal(err)
	}
	if last := entries[len(entries)-1]; last.Ref != ref("zeta", "id1") || last.Complete {
		t.Errorf("after a failed delete: %+v, want zeta/id1 listed as incomplete", last)
	}
	if err := client.DeleteBackup(ctx, ref("zeta", "id1")); err != nil {
		t.Errorf("second delete: %v", err)
	}
	checkNothingLeft(t, s, client.BackupDir(ref("zeta", "id1")), "deleted on the second attempt")
}
