package binlogarchive

import (
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

func TestArchiveStatus(t *testing.T) {
	const u = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
	t0 := time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	sum := "0000000000000000000000000000000000000000000000000000000000000000"
	index := objectstore.NewIndex()
	index.Segments = []objectstore.Segment{
		{Name: "x/2", PreviousGTIDs: u + ":1-5", GTIDRange: u + ":6-9", FirstEventTime: at(20), LastEventTime: at(30), SHA256: sum},
		{Name: "x/1", GTIDRange: u + ":1-5", FirstEventTime: at(0), LastEventTime: at(10), SHA256: sum},
	}
	backup := &objectstore.Metadata{BackupName: "nightly", BackupID: "1", StartedAt: at(2), StoppedAt: at(5), GTIDExecuted: u + ":1-3"}
	for _, tc := range []struct {
		rule     string
		backups  []*objectstore.Metadata
		lag      time.Duration
		window   bool
		wantLag  int64
		from, to time.Time
	}{
		{"the window runs from the backup's end to the newest archived transaction, the lag in whole seconds",
			[]*objectstore.Metadata{backup}, 2500 * time.Millisecond, true, 2, at(5), at(30)},
		{"no base backup: the archive is reported, without a window", nil, 0, false, 0, time.Time{}, time.Time{}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			st, err := ArchiveStatus("db-1", Health{Lag: tc.lag}, index, tc.backups)
			if err != nil {
				t.Fatal(err)
			}
			if st.Instance != "db-1" || st.LastSegment != "x/2" || !st.LastArchivedTime.Time.Equal(at(30)) || st.LagSeconds != tc.wantLag {
				t.Fatalf("status %+v", st)
			}
			if !tc.window {
				if st.RecoverableFrom != nil || st.RecoverableTo != nil || st.FirstRecoverableBackup != "" {
					t.Fatalf("a window without a backup: %+v", st)
				}
				return
			}
			if !st.RecoverableFrom.Time.Equal(tc.from) || !st.RecoverableTo.Time.Equal(tc.to) || st.FirstRecoverableBackup != "nightly/1" {
				t.Fatalf("window %v .. %v from %s", st.RecoverableFrom, st.RecoverableTo, st.FirstRecoverableBackup)
			}
		})
	}
}
