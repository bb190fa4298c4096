package retentionpass_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

var window30 = retention.Policy{Window: 30 * day}

// racingStore lets another writer (the archiver) append a segment to the index right after
// the pass read it for its rewrite, so the pass's conditional write meets a real conflict.
type racingStore struct {
	retentionpass.Store
	archiver *objectstore.Client
	appended objectstore.Segment
	mutates  atomic.Int32
}

func (r *racingStore) UpdateIndex(ctx context.Context, cluster string, mutate func(*objectstore.Index) error) (*objectstore.Index, error) {
	return r.Store.UpdateIndex(ctx, cluster, func(x *objectstore.Index) error {
		if r.mutates.Add(1) == 1 {
			if _, err := r.archiver.UpdateIndex(ctx, cluster, func(y *objectstore.Index) error {
				y.Upsert(r.appended)
				return nil
			}); err != nil {
				return err
			}
		}
		return mutate(x)
	})
}

// TestRunKeepsConcurrentIndexAppends: a segment the archiver appends while the pass rewrites
// the index survives; the pass retries on the conflict and still removes what it deleted.
func TestRunKeepsConcurrentIndexAppends(t *testing.T) {
	s := s3test.Start(t)
	f := seedFixture(t, s, "race", time.Now().Truncate(time.Second))
	data := []byte("the newest segment")
	sum := sha256.Sum256(data)
	putObject(t, s, objectstore.BinlogKey(f.prefix, testCluster, "binlog.000100"), data)
	store := &racingStore{Store: f.direct, archiver: newClient(t, storeConfig(t, s, s.Endpoint, f.prefix), true),
		appended: objectstore.Segment{Name: "binlog.000100", Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]),
			FirstEventTime: f.now.Add(-time.Minute), LastEventTime: f.now}}

	report, err := retentionpass.Run(t.Context(), store, testCluster, window30, retentionpass.Options{Now: f.now, IncompleteGrace: time.Hour})
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	if n := store.mutates.Load(); n < 2 {
		t.Errorf("the index rewrite ran its mutation %d times; want a retry after the conflict", n)
	}
	listed := readIndex(t, s, f.prefix)
	if !listed["binlog.000100"] {
		t.Error("the segment appended during the pass is lost from the index")
	}
	if report.Segments != 4 {
		t.Errorf("report: %d segments deleted, want 4", report.Segments)
	}
	for _, sg := range fixtureSegments[:4] {
		if listed[sg.name] {
			t.Errorf("deleted segment %s is still in the index", sg.name)
		}
	}
}

// TestRunWithoutIndexCreatesNone: a cluster with backups and no binlog index yet has no
// segments, and the pass does not create an index.
func TestRunWithoutIndexCreatesNone(t *testing.T) {
	s := s3test.Start(t)
	now := time.Now().Truncate(time.Second)
	c := newClient(t, storeConfig(t, s, s.Endpoint, "noindex"), true)
	for _, b := range fixtureBackups {
		uploadBackup(t, c, b, now)
	}
	report, err := retentionpass.Run(t.Context(), c, testCluster, window30, retentionpass.Options{Now: now})
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	if got := names(report.Expired); !slices.Equal(got, []string{"b40", "b60"}) || report.Segments != 0 {
		t.Errorf("report: expired %v, %d segments; want b40 and b60, none", got, report.Segments)
	}
	if objectExists(t, s, objectstore.IndexKey("noindex", testCluster)) {
		t.Error("the pass created a binlog index")
	}
}

// TestRunRemovesIndexEntriesOfGoneObjects: an interrupted pass can leave index entries whose
// objects are gone; the next pass plans them again and removes them.
func TestRunRemovesIndexEntriesOfGoneObjects(t *testing.T) {
	s := s3test.Start(t)
	f := seedFixture(t, s, "orphans", time.Now().Truncate(time.Second))
	for _, sg := range fixtureSegments[:2] {
		if err := s.Client().RemoveObject(t.Context(), s.Bucket, objectstore.BinlogKey(f.prefix, testCluster, sg.name), minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := retentionpass.Run(t.Context(), f.direct, testCluster, window30, retentionpass.Options{Now: f.now, IncompleteGrace: time.Hour}); err != nil {
		t.Fatalf("pass: %v", err)
	}
	f.checkOutcome(t, []string{"b01", "b10", "b20"}, names4to7(), "after the pass")
}

func names4to7() []string {
	var out []string
	for _, sg := range fixtureSegments[4:] {
		out = append(out, sg.name)
	}
	return out
}

// TestRunKeepsUnreadableMetadataAndBinlogs: a complete directory whose metadata.json does not
// decode is kept and reported, and no binlog segment is deleted while its start is unknown;
// backups still expire.
func TestRunKeepsUnreadableMetadataAndBinlogs(t *testing.T) {
	s := s3test.Start(t)
	f := seedFixture(t, s, "unreadable", time.Now().Truncate(time.Second))
	bad := ref("b99", "id-b99")
	putObject(t, s, objectstore.ArchiveKey(f.prefix, bad, "tar.zst"), []byte("archive"))
	putObject(t, s, objectstore.MetadataKey(f.prefix, bad), []byte(`{"schemaVersion":1,"cluster":"pc1"}`))
	report, err := retentionpass.Run(t.Context(), f.direct, testCluster, window30, retentionpass.Options{Now: f.now, IncompleteGrace: time.Hour})
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	if len(report.Unreadable) != 1 || report.Unreadable[0] != bad {
		t.Errorf("report: unreadable %v, want %v", report.Unreadable, bad)
	}
	if keys := keysUnder(t, s, objectstore.BackupDir(f.prefix, bad)); len(keys) != 2 {
		t.Errorf("the directory with unreadable metadata has %v, want both objects kept", keys)
	}
	var all []string
	for _, sg := range fixtureSegments {
		all = append(all, sg.name)
	}
	f.checkOutcome(t, []string{"b01", "b10", "b20"}, all, "after the pass")
}

// TestRunAbortsStaleUploads: a multipart upload older than the grace period is aborted, a
// younger one and one in a protected directory are left.
func TestRunAbortsStaleUploads(t *testing.T) {
	s := s3test.Start(t)
	now := time.Now().Truncate(time.Second)
	c := newClient(t, storeConfig(t, s, s.Endpoint, "uploads"), true)
	uploadBackup(t, c, fixtureBackups[0], now)
	core := minio.Core{Client: s.Client()}
	for _, name := range []string{"stale", "kept"} {
		key := objectstore.ArchiveKey("uploads", ref(name, "id-"+name), "tar.zst")
		if _, err := core.NewMultipartUpload(t.Context(), s.Bucket, key, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	opts := retentionpass.Options{Now: now, IncompleteGrace: time.Hour,
		Protected: func(r objectstore.BackupRef) bool { return r.Name == "kept" }}
	report, err := retentionpass.Run(t.Context(), c, testCluster, window30, opts)
	if err != nil || report.AbortedUploads != 0 {
		t.Fatalf("pass within the grace period: aborted %d, %v; want none", report.AbortedUploads, err)
	}
	opts.Now = now.Add(2 * time.Hour)
	report, err = retentionpass.Run(t.Context(), c, testCluster, window30, opts)
	if err != nil || report.AbortedUploads != 1 {
		t.Fatalf("pass after the grace period: aborted %d, %v; want 1", report.AbortedUploads, err)
	}
	var left []string
	for u := range s.Client().ListIncompleteUploads(t.Context(), s.Bucket, "uploads/", true) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		left = append(left, u.Key)
	}
	if len(left) != 1 || !strings.Contains(left[0], "/kept/") {
		t.Errorf("uploads left: %v, want only the protected one", left)
	}
	checkBackupWhole(t.Context(), t, c, fixtureBackups[0].ref(), "after the passes")
}

// TestRunZeroPolicyDeletesNothing: without a policy nothing is deleted, not even interrupted
// uploads.
func TestRunZeroPolicyDeletesNothing(t *testing.T) {
	s := s3test.Start(t)
	f := seedFixture(t, s, "zero", time.Now().Truncate(time.Second))
	report, err := retentionpass.Run(t.Context(), f.direct, testCluster, retention.Policy{}, retentionpass.Options{Now: f.now, IncompleteGrace: time.Hour})
	if err != nil || report.DeletedAnything() {
		t.Fatalf("pass: %+v, %v; want nothing deleted", report, err)
	}
	var all, keep []string
	for _, sg := range fixtureSegments {
		all = append(all, sg.name)
	}
	for _, b := range fixtureBackups {
		keep = append(keep, b.name)
	}
	f.checkOutcome(t, keep, all, "after the pass")
	if len(keysUnder(t, s, objectstore.BackupDir(f.prefix, partialRef))) == 0 {
		t.Error("the interrupted upload was deleted without a policy")
	}
}

// TestRunWithoutBackupsKeepsSegments: with no complete backup there is no horizon, so no
// segment is deleted, however old.
func TestRunWithoutBackupsKeepsSegments(t *testing.T) {
	s := s3test.Start(t)
	now := time.Now().Truncate(time.Second)
	c := newClient(t, storeConfig(t, s, s.Endpoint, "nobackups"), true)
	writeSegments(t, s, c, "nobackups", fixtureSegments, now)
	report, err := retentionpass.Run(t.Context(), c, testCluster, retention.Policy{Window: day, Count: 1}, retentionpass.Options{Now: now})
	if err != nil || report.DeletedAnything() || !report.Plan.Horizon.IsZero() {
		t.Fatalf("pass: %+v, %v; want nothing deleted and no horizon", report, err)
	}
	if listed := readIndex(t, s, "nobackups"); len(listed) != len(fixtureSegments) {
		t.Errorf("the index lists %d segments, want all %d", len(listed), len(fixtureSegments))
	}
}

// TestRunRefusesZeroNow: a pass without a current time would expire nothing by window and
// could misjudge the grace period; it fails before any request.
func TestRunRefusesZeroNow(t *testing.T) {
	_, err := retentionpass.Run(t.Context(), nil, testCluster, window30, retentionpass.Options{})
	if !errors.Is(err, objectstore.ErrInvalid) {
		t.Errorf("pass with a zero Now: %v, want ErrInvalid", err)
	}
}
