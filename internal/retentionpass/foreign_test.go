package retentionpass_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestRunLeavesAnotherNamespacesBackupsAlone: a Cluster of the same name in another namespace
// writing to the same bucket and path puts its backups in this cluster's directory. Taken for
// this cluster's, its newest backup would be the newest, count 1 would delete this cluster's
// real newest, and its own older backups would be expired by a policy that is not theirs. Its
// directories are kept, left out of the inventory and reported, with its namespace; this
// cluster's backups, whether they name its namespace or none (written before the namespace was
// recorded), follow the policy; and no binlog segment is deleted, since the binlog directory
// is shared too.
func TestRunLeavesAnotherNamespacesBackupsAlone(t *testing.T) {
	s := s3test.Start(t)
	f := seedFixture(t, s, "foreign", time.Now().Truncate(time.Second))
	theirs := []backupSpec{{"f-new", 12 * time.Hour}, {"f-old", 50 * day}}
	for _, b := range theirs {
		uploadBackupIn(t, f.direct, b, f.now, "team-b")
	}
	mine := backupSpec{"a05", 5 * day}
	uploadBackupIn(t, f.direct, mine, f.now, "team-a")

	report, err := retentionpass.Run(t.Context(), f.direct, testCluster, retention.Policy{Count: 1},
		retentionpass.Options{Now: f.now, IncompleteGrace: time.Hour, Namespace: "team-a"})
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	for _, b := range theirs {
		checkBackupWhole(t.Context(), t, f.direct, b.ref(), "another namespace's backup after the pass")
	}
	checkBackupGone(t, s, f.prefix, mine.ref(), "this namespace's older backup")
	var all []string
	for _, sg := range fixtureSegments {
		all = append(all, sg.name)
	}
	f.checkOutcome(t, []string{"b01"}, all, "after the pass")
	if got := names(report.Foreign); !slices.Equal(got, []string{"f-new", "f-old"}) {
		t.Errorf("report: foreign %v, want f-new and f-old", got)
	}
	if !slices.Equal(report.ForeignNamespaces, []string{"team-b"}) {
		t.Errorf("report: foreign namespaces %v, want [team-b]", report.ForeignNamespaces)
	}
	if report.Segments != 0 || len(report.Plan.DeleteSegments) != 0 {
		t.Errorf("report: %d segments deleted, %d planned; want none while another Cluster shares the binlogs",
			report.Segments, len(report.Plan.DeleteSegments))
	}
	wantFound := []string{"a05", "b01", "b10", "b20", "b40", "b60", "f-new", "f-old"}
	if got := names(report.Found); !report.Listed || !slices.Equal(got, wantFound) {
		t.Errorf("report: listed %v, found %v; want %v", report.Listed, got, wantFound)
	}
}

// TestRunLeavesAnotherIncarnationsBackupsAlone: backups in the directory whose metadata.json
// records a Cluster UID that is neither this incarnation's nor one it continues are another
// incarnation's history (a Cluster of the same name deleted and re-created, whose data stayed):
// kept, left out of the inventory and reported. This incarnation's backups, those of the
// incarnation it continues and those recording no UID follow the policy.
func TestRunLeavesAnotherIncarnationsBackupsAlone(t *testing.T) {
	s := s3test.Start(t)
	f := seedFixture(t, s, "incarnations", time.Now().Truncate(time.Second))
	other := backupSpec{"o-new", 6 * time.Hour} // the newest of all, and not this Cluster's
	uploadBackupOf(t, f.direct, other, f.now, "team-a", "uid-other")
	continued := backupSpec{"c03", 3 * day}
	uploadBackupOf(t, f.direct, continued, f.now, "team-a", "uid-before")
	mine := backupSpec{"m00", 9 * time.Hour} // newer than every backup of the fixture (recording no UID)
	uploadBackupOf(t, f.direct, mine, f.now, "team-a", "uid-now")

	report, err := retentionpass.Run(t.Context(), f.direct, testCluster, retention.Policy{Count: 1},
		retentionpass.Options{Now: f.now, IncompleteGrace: time.Hour, Namespace: "team-a", Incarnations: []string{"uid-now", "uid-before"}})
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	checkBackupWhole(t.Context(), t, f.direct, other.ref(), "another incarnation's backup after the pass")
	checkBackupWhole(t.Context(), t, f.direct, mine.ref(), "this incarnation's newest backup after the pass")
	checkBackupGone(t, s, f.prefix, continued.ref(), "the continued incarnation's older backup")
	if got := names(report.Foreign); !slices.Equal(got, []string{"o-new"}) {
		t.Errorf("report: foreign %v, want o-new", got)
	}
	if report.Segments != 0 || len(report.Plan.DeleteSegments) != 0 {
		t.Errorf("report: %d segments deleted, %d planned; want none while another incarnation's backups remain",
			report.Segments, len(report.Plan.DeleteSegments))
	}
}
