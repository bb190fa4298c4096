package retentionpass_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// What a window-30d pass over the standard inventory keeps.
var (
	sweepKeep     = []string{"b01", "b10", "b20"}
	sweepKeepSegs = []string{segName(5), segName(6), segName(7)}
)

// TestFaultSweep fails each S3 call of a pass in turn (an error status, a connection dropped
// before the server acts, and one dropped after it acted), on a fresh copy of the same
// inventory, then runs a clean pass. Whatever the faulty pass did, the clean pass must leave
// exactly the planned outcome: a valid index listing exactly the kept segments, each present,
// every kept backup whole (the newest among them), every expired backup, interrupted upload and
// stale multipart upload gone, and no index entry for a deleted segment.
func TestFaultSweep(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.Start(t, s.Endpoint)
	written := time.Now().Truncate(time.Second)

	f := seedSweepFixture(t, s, "sweep/reference", written)
	opts := retentionpass.Options{Now: f.now, IncompleteGrace: time.Hour}
	proxy.Reset()
	report, err := retentionpass.Run(t.Context(), sweepClient(t, s, proxy, f.prefix), testCluster, window30, opts)
	if err != nil {
		t.Fatalf("reference pass: %v", err)
	}
	calls := proxy.Requests()
	f.checkSweepOutcome(t, "reference pass")
	if report.AbortedUploads != 1 || len(report.Incomplete) != 1 {
		t.Errorf("reference pass: %d uploads aborted, incomplete %v; want 1 and 1", report.AbortedUploads, report.Incomplete)
	}
	t.Logf("a pass makes %d S3 calls: %v", len(calls), proxy.Counts())

	actions := []struct {
		name   string
		action s3proxy.Action
	}{{"500", s3proxy.Status(500)}, {"drop", s3proxy.Drop()}, {"drop-response", s3proxy.DropResponse()}}
	for _, a := range actions {
		for i, call := range calls {
			n := i + 1
			t.Run(fmt.Sprintf("%s at call %d %s", a.name, n, call.Kind), func(t *testing.T) {
				f := seedSweepFixture(t, s, fmt.Sprintf("sweep/%s/%d", a.name, n), written)
				proxy.Reset()
				proxy.FailNth(n, a.action)
				faulty, passErr := retentionpass.Run(t.Context(), sweepClient(t, s, proxy, f.prefix), testCluster, window30, opts)
				if proxy.Fired() != 1 {
					t.Fatalf("the fault at call %d did not fire (%d calls, error %v)", n, proxy.Total(), passErr)
				}
				proxy.ClearFaults()
				f.checkNoHalfBackup(t)
				for _, r := range append(faulty.Expired, faulty.Incomplete...) {
					checkBackupGone(t, s, f.prefix, r, "reported deleted by the faulty pass")
				}
				if _, err := retentionpass.Run(t.Context(), f.direct, testCluster, window30, opts); err != nil {
					t.Fatalf("clean pass after the fault (faulty pass: %v): %v", passErr, err)
				}
				f.checkSweepOutcome(t, fmt.Sprintf("after the clean pass (faulty pass: %v)", passErr))
			})
		}
	}
}

// seedSweepFixture is the standard inventory plus a multipart upload left open in an
// interrupted backup's directory.
func seedSweepFixture(t *testing.T, s *s3test.Server, prefix string, written time.Time) *fixture {
	t.Helper()
	f := seedFixture(t, s, prefix, written)
	core := minio.Core{Client: s.Client()}
	key := objectstore.ArchiveKey(prefix, ref("abandoned", "id-abandoned"), "tar.zst")
	if _, err := core.NewMultipartUpload(t.Context(), s.Bucket, key, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	return f
}

// sweepClient reaches the server through the proxy without retries, so each fault surfaces.
func sweepClient(t *testing.T, s *s3test.Server, proxy *s3proxy.Proxy, prefix string) *objectstore.Client {
	t.Helper()
	return newClient(t, storeConfig(t, s, proxy.URL, prefix), false)
}

// checkNoHalfBackup fails if any backup directory holds metadata.json without its archive, or
// the newest backup is not whole.
func (f *fixture) checkNoHalfBackup(t *testing.T) {
	t.Helper()
	entries, err := f.direct.ListBackups(t.Context(), testCluster)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		hasArchive := false
		for _, k := range e.Keys {
			hasArchive = hasArchive || strings.HasSuffix(k, "/backup.tar.zst")
		}
		if e.Complete && !hasArchive {
			t.Errorf("after the faulty pass: %s/%s has metadata.json without its archive", e.Ref.Name, e.Ref.ID)
		}
	}
	checkBackupWhole(t.Context(), t, f.direct, fixtureBackups[0].ref(), "after the faulty pass")
	readIndex(t, f.s, f.prefix) // decodes and validates
}

// checkSweepOutcome checks the outcome of a complete window-30d pass.
func (f *fixture) checkSweepOutcome(t *testing.T, what string) {
	t.Helper()
	f.checkOutcome(t, sweepKeep, sweepKeepSegs, what)
	if keys := keysUnder(t, f.s, objectstore.BackupDir(f.prefix, partialRef)); len(keys) > 0 {
		t.Errorf("%s: the interrupted upload is left: %v", what, keys)
	}
	for u := range f.s.Client().ListIncompleteUploads(t.Context(), f.s.Bucket, f.prefix+"/", true) {
		t.Errorf("%s: multipart upload of %s left open (%v)", what, u.Key, u.Err)
	}
}
