package binlogarchive

import (
	"slices"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

const (
	uuidA = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	uuidB = "4e11fa47-71ca-11e1-9e33-c80aa9429562"
)

var t0 = time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)

func set(s string) gtid.Set { return gtid.MustParse(s) }

// closed returns a closed binlog holding gtids after previous, closed at t0+closedAfter.
func closed(name, previous, gtids string, closedAfter time.Duration) Binlog {
	return Binlog{Name: name, Previous: set(previous), GTIDs: set(gtids), FirstEvent: t0, ClosedAt: t0.Add(closedAfter)}
}

func open(name, previous, gtids string, first time.Time) Binlog {
	return Binlog{Name: name, Open: true, Previous: set(previous), GTIDs: set(gtids), FirstEvent: first}
}

var primary = Role{Primary: true, LeaseRequired: true, LeaseHeld: true, Writable: true}

// observation is a primary with three binlogs: 1-10 and 11-20 closed, 21-25 open since t0+50s.
func observation() Observation {
	return Observation{
		Now:  t0.Add(time.Minute),
		Role: primary,
		Binlogs: []Binlog{
			closed("binlog.000001", "", uuidA+":1-10", 10*time.Second),
			closed("binlog.000002", uuidA+":1-10", uuidA+":11-20", 20*time.Second),
			open("binlog.000003", uuidA+":1-20", uuidA+":21-25", t0.Add(50*time.Second)),
		},
		Executed:       set(uuidA + ":1-25"),
		Archived:       set(uuidA + ":1-10"),
		ArchiveTimeout: 5 * time.Second,
		KeepLocal:      0,
	}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Observation)
		check  func(*testing.T, Decision)
	}{
		{"a closed binlog not archived is uploaded, an archived one is not", func(*Observation) {}, func(t *testing.T, d Decision) {
			wantUpload(t, d, "binlog.000002")
		}},
		{"every closed binlog is uploaded in order when the archive is empty", func(o *Observation) {
			o.Archived, o.ArchiveEmpty = gtid.Set{}, true
		}, func(t *testing.T, d Decision) { wantUpload(t, d, "binlog.000001", "binlog.000002") }},
		{"the open binlog is never uploaded", func(o *Observation) {
			o.Archived = set(uuidA + ":1-20")
		}, func(t *testing.T, d Decision) { wantUpload(t, d) }},
		{"a closed binlog without transactions counts as archived", func(o *Observation) {
			o.Binlogs[1].GTIDs = gtid.Set{}
		}, func(t *testing.T, d Decision) {
			wantUpload(t, d)
			if d.PurgeTo != "binlog.000003" {
				t.Fatalf("PurgeTo = %q, want binlog.000003", d.PurgeTo)
			}
		}},
		{"a partly archived binlog (after a failover) is uploaded whole", func(o *Observation) {
			o.Archived = set(uuidA + ":1-15")
		}, func(t *testing.T, d Decision) { wantUpload(t, d, "binlog.000002") }},
		{"the open binlog is rotated once its oldest transaction passed the timeout", func(o *Observation) {
			o.Now = t0.Add(55 * time.Second)
		}, func(t *testing.T, d Decision) { wantRotate(t, d, true) }},
		{"the open binlog is not rotated before the timeout", func(o *Observation) {
			o.Now = t0.Add(54*time.Second + 999*time.Millisecond)
		}, func(t *testing.T, d Decision) { wantRotate(t, d, false) }},
		{"an open binlog without transactions is never rotated", func(o *Observation) {
			o.Binlogs[2].GTIDs, o.Binlogs[2].FirstEvent = gtid.Set{}, time.Time{}
			o.Now = t0.Add(time.Hour)
		}, func(t *testing.T, d Decision) { wantRotate(t, d, false) }},
		{"only archived binlogs are purged", func(*Observation) {}, func(t *testing.T, d Decision) {
			if d.PurgeTo != "binlog.000002" {
				t.Fatalf("PurgeTo = %q, want binlog.000002", d.PurgeTo)
			}
		}},
		{"an archived binlog is kept for KeepLocal after it closed", func(o *Observation) {
			o.KeepLocal = 51 * time.Second
		}, func(t *testing.T, d Decision) {
			if d.PurgeTo != "" {
				t.Fatalf("PurgeTo = %q, want none", d.PurgeTo)
			}
		}},
		{"nothing is purged when the oldest binlog is not archived", func(o *Observation) {
			o.Archived, o.ArchiveEmpty = gtid.Set{}, true
		}, func(t *testing.T, d Decision) {
			if d.PurgeTo != "" {
				t.Fatalf("PurgeTo = %q, want none", d.PurgeTo)
			}
		}},
		{"the backlog and the oldest unarchived transaction are reported", func(*Observation) {}, func(t *testing.T, d Decision) {
			if d.Backlog != 2 || !d.OldestUnarchived.Equal(t0) || !d.OpenUnarchived.Equal(t0.Add(50*time.Second)) {
				t.Fatalf("Backlog %d since %v, want 2 since %v", d.Backlog, d.OldestUnarchived, t0)
			}
		}},
		{"no lag when everything is archived", func(o *Observation) {
			o.Archived = set(uuidA + ":1-25")
		}, func(t *testing.T, d Decision) {
			if d.Backlog != 0 || !d.OldestUnarchived.IsZero() {
				t.Fatalf("Backlog %d since %v, want none", d.Backlog, d.OldestUnarchived)
			}
		}},
		{"a fork (archived history the server never executed) is refused", func(o *Observation) {
			o.Archived = set(uuidA + ":1-10," + uuidB + ":1-3")
		}, func(t *testing.T, d Decision) {
			if !d.Fork.Equal(set(uuidB+":1-3")) || len(d.Upload) != 0 || d.Rotate || d.PurgeTo != "" {
				t.Fatalf("got %+v, want a fork on %s:1-3 and no action", d, uuidB)
			}
		}},
		{"a new primary continuing the archive has no gap", func(o *Observation) {
			o.Binlogs = []Binlog{
				closed("binlog.000001", "", uuidA+":1-20", time.Second),
				closed("binlog.000002", uuidA+":1-20", uuidB+":1-4", 2*time.Second),
				open("binlog.000003", uuidA+":1-20,"+uuidB+":1-4", "", time.Time{}),
			}
			o.Executed, o.Archived = set(uuidA+":1-20,"+uuidB+":1-4"), set(uuidA+":1-20")
		}, func(t *testing.T, d Decision) {
			wantUpload(t, d, "binlog.000002")
			if !d.Gap.IsEmpty() {
				t.Fatalf("Gap = %s, want none", d.Gap)
			}
		}},
		{"a gap between the archive and the first binlog to upload is reported", func(o *Observation) {
			o.Binlogs = []Binlog{
				closed("binlog.000007", uuidA+":1-30", uuidB+":1-4", time.Second),
				open("binlog.000008", uuidA+":1-30,"+uuidB+":1-4", "", time.Time{}),
			}
			o.Executed, o.Archived = set(uuidA+":1-30,"+uuidB+":1-4"), set(uuidA+":1-20")
		}, func(t *testing.T, d Decision) {
			wantUpload(t, d, "binlog.000007")
			if !d.Gap.Equal(set(uuidA + ":21-30")) {
				t.Fatalf("Gap = %s, want %s:21-30", d.Gap, uuidA)
			}
		}},
		{"history before the archive began is covered, not a gap", func(o *Observation) {
			o.Covered = set(uuidA + ":1-5")
			o.Archived = set(uuidA + ":6-10")
		}, func(t *testing.T, d Decision) {
			if !d.Gap.IsEmpty() {
				t.Fatalf("Gap = %s, want none", d.Gap)
			}
		}},
		{"a replica stands down", func(o *Observation) { o.Role.Primary = false }, wantStandDown(ReasonNotPrimary)},
		{"a fenced primary stands down", func(o *Observation) { o.Role.Fenced = true }, wantStandDown(ReasonFenced)},
		{"a demoted primary stands down", func(o *Observation) { o.Role.Demoted = true }, wantStandDown(ReasonDemoted)},
		{"a primary without the Lease stands down", func(o *Observation) { o.Role.LeaseHeld = false }, wantStandDown(ReasonNoLease)},
		{"a primary without a Lease to hold archives", func(o *Observation) {
			o.Role.LeaseRequired, o.Role.LeaseHeld = false, false
		}, func(t *testing.T, d Decision) { wantUpload(t, d, "binlog.000002") }},
		{"a read-only primary stands down", func(o *Observation) { o.Role.Writable = false }, wantStandDown(ReasonReadOnly)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := observation()
			tc.change(&o)
			tc.check(t, Decide(o))
		})
	}
}

func wantUpload(t *testing.T, d Decision, names ...string) {
	t.Helper()
	if d.StandDown != "" || !d.Fork.IsEmpty() {
		t.Fatalf("stood down (%q) or forked (%s)", d.StandDown, d.Fork)
	}
	if !slices.Equal(d.Upload, names) {
		t.Fatalf("Upload = %v, want %v", d.Upload, names)
	}
}

func wantRotate(t *testing.T, d Decision, want bool) {
	t.Helper()
	if d.Rotate != want {
		t.Fatalf("Rotate = %v, want %v", d.Rotate, want)
	}
}

func wantStandDown(reason string) func(*testing.T, Decision) {
	return func(t *testing.T, d Decision) {
		t.Helper()
		if d.StandDown != reason || len(d.Upload) != 0 || d.Rotate || d.PurgeTo != "" {
			t.Fatalf("got %+v, want to stand down (%s) doing nothing", d, reason)
		}
	}
}
