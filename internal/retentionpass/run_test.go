package retentionpass_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestRunOverRealObjects runs passes over the standard inventory in a real store, one rule of
// the seed per row, and checks what is left; a second pass then finds nothing to do.
func TestRunOverRealObjects(t *testing.T) {
	s := s3test.Start(t)
	written := time.Now().Truncate(time.Second)
	dirSize := measureDirSize(t, s, written)
	all := []string{segName(1), segName(2), segName(3), segName(4), segName(5), segName(6), segName(7)}
	for i, tc := range []struct {
		name      string
		policy    retention.Policy
		protected []string
		grace     time.Duration
		keep      []string
		keepSegs  []string
		partial   bool // the interrupted upload survives
	}{
		{name: "window expires backups completed before now minus the window; segments before the oldest kept start go",
			policy: retention.Policy{Window: 30 * day}, grace: time.Hour,
			keep: []string{"b01", "b10", "b20"}, keepSegs: all[4:]},
		{name: "count keeps the newest N",
			policy: retention.Policy{Count: 2}, grace: time.Hour,
			keep: []string{"b01", "b10"}, keepSegs: all[5:]},
		{name: "size keeps the newest backups that fit",
			policy: retention.Policy{Size: 2*dirSize + 1}, grace: time.Hour,
			keep: []string{"b01", "b10"}, keepSegs: all[5:]},
		{name: "the newest backup is kept even when it is older than the window; unknown segments are kept",
			policy: retention.Policy{Window: 12 * time.Hour}, grace: time.Hour,
			keep: []string{"b01"}, keepSegs: all[6:]},
		{name: "protected backups survive and keep their binlogs",
			policy: retention.Policy{Window: 30 * day}, protected: []string{"b60"}, grace: time.Hour,
			keep: []string{"b01", "b10", "b20", "b60"}, keepSegs: all[1:]},
		{name: "an interrupted upload younger than the grace period is kept",
			policy: retention.Policy{Window: 30 * day}, grace: 3 * time.Hour,
			keep: []string{"b01", "b10", "b20"}, keepSegs: all[4:], partial: true},
		{name: "a protected interrupted upload is kept",
			policy: retention.Policy{Window: 30 * day}, protected: []string{"partial"}, grace: time.Hour,
			keep: []string{"b01", "b10", "b20"}, keepSegs: all[4:], partial: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := seedFixture(t, s, fmt.Sprintf("rows/%d", i), written)
			opts := retentionpass.Options{Now: f.now, IncompleteGrace: tc.grace,
				Protected: func(r objectstore.BackupRef) bool { return slices.Contains(tc.protected, r.Name) }}
			report, err := retentionpass.Run(t.Context(), f.direct, testCluster, tc.policy, opts)
			if err != nil {
				t.Fatalf("pass: %v", err)
			}
			f.checkOutcome(t, tc.keep, tc.keepSegs, "after the pass")
			partialLeft := len(keysUnder(t, s, objectstore.BackupDir(f.prefix, partialRef))) > 0
			if partialLeft != tc.partial {
				t.Errorf("interrupted upload left: %v, want %v", partialLeft, tc.partial)
			}
			wantExpired := expiredNames(tc.keep)
			if got := names(report.Expired); !slices.Equal(got, wantExpired) {
				t.Errorf("report: expired %v, want %v", got, wantExpired)
			}
			if report.ExpiredBytes != int64(len(wantExpired))*dirSize || report.Segments != len(all)-len(tc.keepSegs) {
				t.Errorf("report: %d expired bytes (want %d), %d segments (want %d)", report.ExpiredBytes,
					int64(len(wantExpired))*dirSize, report.Segments, len(all)-len(tc.keepSegs))
			}
			if got := len(report.Incomplete) == 1; got == tc.partial || !report.DeletedAnything() {
				t.Errorf("report: incomplete %v (interrupted upload kept: %v), deleted anything %v",
					report.Incomplete, tc.partial, report.DeletedAnything())
			}
			again, err := retentionpass.Run(t.Context(), f.direct, testCluster, tc.policy, opts)
			if err != nil || again.DeletedAnything() {
				t.Errorf("second pass: %+v, %v; want nothing to do", again, err)
			}
			f.checkOutcome(t, tc.keep, tc.keepSegs, "after a second pass")
		})
	}
}

// measureDirSize seeds one backup and returns the bytes of its directory as listed; every
// fixture backup has the same.
func measureDirSize(t *testing.T, s *s3test.Server, written time.Time) int64 {
	t.Helper()
	c := newClient(t, storeConfig(t, s, s.Endpoint, "size-probe"), true)
	uploadBackup(t, c, fixtureBackups[0], written)
	entries, err := c.ListBackups(t.Context(), testCluster)
	if err != nil || len(entries) != 1 {
		t.Fatalf("listing the probe: %v, %v", entries, err)
	}
	return entries[0].Size
}

func expiredNames(keep []string) []string {
	var out []string
	for _, b := range fixtureBackups {
		if !slices.Contains(keep, b.name) {
			out = append(out, b.name)
		}
	}
	slices.Sort(out)
	return out
}
