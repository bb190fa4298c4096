package retentionpass_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// The standard inventory: five complete backups, an interrupted upload, and segments of known
// and unknown age.
var (
	fixtureBackups = []backupSpec{
		{"b01", 1 * day}, {"b10", 10 * day}, {"b20", 20 * day}, {"b40", 40 * day}, {"b60", 60 * day},
	}
	fixtureSegments = []segmentSpec{
		{segName(1), 65 * day}, {segName(2), 50 * day}, {segName(3), 35 * day}, {segName(4), 25 * day},
		{segName(5), 15 * day}, {segName(6), 5 * day}, {segName(7), 0},
	}
	partialRef = ref("partial", "id-partial")
)

// fixture is one copy of the standard inventory under its own path prefix.
type fixture struct {
	s      *s3test.Server
	prefix string
	direct *objectstore.Client // straight to the server, with retries
	now    time.Time           // the passes' clock: two hours after the objects were written
}

// seedFixture writes the standard inventory under prefix. The backups' times are relative to
// the returned fixture's now; the objects themselves are written at the real time, two hours
// before it.
func seedFixture(t *testing.T, s *s3test.Server, prefix string, written time.Time) *fixture {
	t.Helper()
	f := &fixture{s: s, prefix: prefix, direct: newClient(t, storeConfig(t, s, s.Endpoint, prefix), true),
		now: written.Add(2 * time.Hour)}
	for _, b := range fixtureBackups {
		uploadBackup(t, f.direct, b, f.now)
	}
	putObject(t, s, objectstore.ArchiveKey(prefix, partialRef, "tar.zst"), []byte("interrupted"))
	writeSegments(t, s, f.direct, prefix, fixtureSegments, f.now)
	return f
}

// checkOutcome checks that the backups named in keep are whole, the other fixture backups are
// gone, the index lists exactly keepSegs and every listed segment's object exists, and every
// deleted segment's object is gone.
func (f *fixture) checkOutcome(t *testing.T, keep, keepSegs []string, what string) {
	t.Helper()
	for _, b := range fixtureBackups {
		if slices.Contains(keep, b.name) {
			checkBackupWhole(t.Context(), t, f.direct, b.ref(), what)
		} else {
			checkBackupGone(t, f.s, f.prefix, b.ref(), what)
		}
	}
	listed := readIndex(t, f.s, f.prefix)
	for _, sg := range fixtureSegments {
		key := objectstore.BinlogKey(f.prefix, testCluster, sg.name)
		want := slices.Contains(keepSegs, sg.name)
		if listed[sg.name] != want {
			t.Errorf("%s: segment %s listed in the index: %v, want %v", what, sg.name, listed[sg.name], want)
		}
		if exists := objectExists(t, f.s, key); exists != want {
			t.Errorf("%s: segment object %s exists: %v, want %v", what, sg.name, exists, want)
		}
	}
}

func names(refs []objectstore.BackupRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.Name
	}
	slices.Sort(out)
	return out
}
