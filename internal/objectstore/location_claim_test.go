package objectstore_test

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestClaimIsWonByOneWriter: two Clusters claiming an empty location at once both write the
// marker with If-None-Match: *; versitygw lets exactly one through, and the other gets
// ErrConflict. A takeover replaces the marker only at the ETag it read.
func TestClaimIsWonByOneWriter(t *testing.T) {
	s := s3test.Start(t)
	client := newClient(t, storeConfig(t, s, s.Endpoint, testPrefix), false)
	ctx := t.Context()
	if _, _, err := client.ReadClaim(ctx, testCluster); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("no marker yet: got %v, want ErrNotFound", err)
	}
	now := time.Date(2026, 11, 29, 4, 40, 0, 0, time.UTC)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, uid := range []string{"uid-a", "uid-b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = client.WriteClaim(ctx, testCluster, &objectstore.Claim{Cluster: testCluster, Namespace: "ns-" + uid,
				UID: uid, CreatedAt: now, ClaimedAt: now}, "")
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, objectstore.ErrConflict):
			t.Errorf("the losing claim failed with %v, want ErrConflict", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d claims won (%v), want exactly 1", won, errs)
	}
	claim, etag, err := client.ReadClaim(ctx, testCluster)
	if err != nil || etag == "" || (claim.UID != "uid-a" && claim.UID != "uid-b") || !claim.ClaimedAt.Equal(now) ||
		claim.SchemaVersion != objectstore.ClaimSchemaVersion {
		t.Fatalf("the marker read back: %+v, ETag %q, %v", claim, etag, err)
	}
	next := &objectstore.Claim{Cluster: testCluster, Namespace: "ns-c", UID: "uid-c", ClaimedAt: now.Add(time.Hour),
		Continues: []objectstore.ClaimPredecessor{{UID: claim.UID}}}
	if _, err := client.WriteClaim(ctx, testCluster, next, `"stale"`); !errors.Is(err, objectstore.ErrConflict) {
		t.Errorf("a takeover at a stale ETag: got %v, want ErrConflict", err)
	}
	if _, err := client.WriteClaim(ctx, testCluster, next, etag); err != nil {
		t.Fatalf("a takeover at the ETag read: %v", err)
	}
	got, _, err := client.ReadClaim(ctx, testCluster)
	if err != nil || got.UID != "uid-c" || len(got.PredecessorUIDs()) != 1 || got.PredecessorUIDs()[0] != claim.UID {
		t.Errorf("after the takeover: %+v, %v", got, err)
	}
}

// TestLocationContentsSeesEverythingButTheMarker: what a location holds is counted whatever it
// is (a backup, a stray object, the binlog index), dated by the store, and the backups'
// namespaces, UIDs and GTID sets are read from their metadata.json; the marker is not content.
func TestLocationContentsSeesEverythingButTheMarker(t *testing.T) {
	s := s3test.Start(t)
	client := newClient(t, storeConfig(t, s, s.Endpoint, testPrefix), false)
	ctx := t.Context()
	if _, err := client.WriteClaim(ctx, testCluster, &objectstore.Claim{Cluster: testCluster, Namespace: "a", UID: "uid-a"}, ""); err != nil {
		t.Fatal(err)
	}
	empty, err := client.LocationContents(ctx, testCluster)
	if err != nil || !empty.Empty() {
		t.Fatalf("a location holding only its marker: %+v, %v; want empty", empty, err)
	}
	before := time.Now().Add(-time.Minute)
	p := newProducer(2, 4096)
	req := request(ref("b1", "20261129T000000Z"), p)
	req.Namespace, req.ClusterUID = "team-a", "uid-a"
	if _, err := client.UploadBackup(ctx, req); err != nil {
		t.Fatal(err)
	}
	stray := objectstore.ClusterDir(testPrefix, testCluster) + "notes/readme.txt"
	if _, err := s.Client().PutObject(ctx, s.Bucket, stray, bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := client.LocationContents(ctx, testCluster)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.ReadBackupOwners(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if got.Objects != 3 || got.Oldest.Before(before) || got.Newest.Before(got.Oldest) {
		t.Errorf("contents %+v: want 3 objects (archive, metadata.json, the stray one) dated after %s", got, before)
	}
	if len(got.Namespaces) != 1 || got.Namespaces[0] != "team-a" || len(got.UIDs) != 1 || got.UIDs[0] != "uid-a" ||
		len(got.BackupGTIDs) != 1 || got.BackupGTIDs[0] != p.result().GTIDExecuted {
		t.Errorf("contents %+v: want namespace team-a, uid uid-a and the backup's GTID set", got)
	}
}
