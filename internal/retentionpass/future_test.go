package retentionpass_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestRunDistrustsCompletionTimesInTheFuture: a backup whose metadata.json says it completed
// after the pass's now (written by a Job whose clock ran ahead) cannot be ordered. Were it taken
// at its word it would be the newest, and count or size would delete the backup that really is
// the newest, and every later one, until the wrong time passes. It is kept like a backup with
// unreadable metadata (reported, no binlog segment deleted), and the newest backup with a
// believable time stays the floor.
func TestRunDistrustsCompletionTimesInTheFuture(t *testing.T) {
	s := s3test.Start(t)
	f := seedFixture(t, s, "future", time.Now().Truncate(time.Second))
	ahead := backupSpec{"b-ahead", -30 * day}
	uploadBackup(t, f.direct, ahead, f.now)
	report, err := retentionpass.Run(t.Context(), f.direct, testCluster, retention.Policy{Count: 1},
		retentionpass.Options{Now: f.now, IncompleteGrace: time.Hour})
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	checkBackupWhole(t.Context(), t, f.direct, ahead.ref(), "after the pass")
	if !slices.Contains(report.Unreadable, ahead.ref()) {
		t.Errorf("report: unreadable %v, want %v among them", report.Unreadable, ahead.ref())
	}
	var all []string
	for _, sg := range fixtureSegments {
		all = append(all, sg.name)
	}
	f.checkOutcome(t, []string{"b01"}, all, "after the pass")
}
