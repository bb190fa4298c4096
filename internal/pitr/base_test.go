package pitr

import (
	"errors"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

func backupAt(id string, started, stopped float64, executed string) *objectstore.Metadata {
	return &objectstore.Metadata{BackupName: "b", BackupID: id, StartedAt: at(started), StoppedAt: at(stopped), GTIDExecuted: executed}
}

func TestChooseBase(t *testing.T) {
	early := backupAt("early", 0, 1, a("1-5"))
	middle := backupAt("middle", 3, 4, a("1-12"))
	late := backupAt("late", 5, 7, a("1-20"))
	all := []*objectstore.Metadata{late, early, middle}
	for _, tc := range []struct {
		rule    string
		backups []*objectstore.Metadata
		target  Target
		want    string
		err     error
	}{
		{"latest: the newest backup", all, Target{Kind: Latest}, "late", nil},
		{"time: the newest backup that started and stopped before the target", all, Target{Kind: AtTime, Time: at(4.5)}, "middle", nil},
		{"time: a backup that stopped after the target loses to one that stopped before it", all, Target{Kind: AtTime, Time: at(6)}, "middle", nil},
		{"time: a backup that started before the target is chosen when none stopped before it",
			[]*objectstore.Metadata{late}, Target{Kind: AtTime, Time: at(6)}, "late", nil},
		{"time: a backup that started at the target does not fit", []*objectstore.Metadata{late}, Target{Kind: AtTime, Time: at(5)}, "", ErrNoBase},
		{"time: no backup started before the target", all, Target{Kind: AtTime, Time: at(0)}, "", ErrNoBase},
		{"GTID: the newest backup whose gtid_executed is within the target", all,
			Target{Kind: AtGTID, GTID: gtid.MustParse(a("1-15"))}, "middle", nil},
		{"GTID: no backup within the target", all, Target{Kind: AtGTID, GTID: gtid.MustParse(a("1-4"))}, "", ErrNoBase},
		{"no backup at all", nil, Target{Kind: Latest}, "", ErrNoBase},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, err := ChooseBase(tc.backups, tc.target)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v, %v; want %v", got, err, tc.err)
				}
				return
			}
			if err != nil || got.BackupID != tc.want {
				t.Fatalf("got %v, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestCheckBase(t *testing.T) {
	md := backupAt("middle", 3, 4, a("1-12"))
	for _, tc := range []struct {
		rule   string
		target Target
		err    error
	}{
		{"latest: any backup", Target{Kind: Latest}, nil},
		{"time: a backup that started before the target", Target{Kind: AtTime, Time: at(3.5)}, nil},
		{"time: a backup that started at or after the target is past it", Target{Kind: AtTime, Time: at(3)}, ErrBaseBeyondTarget},
		{"GTID: a backup within the target", Target{Kind: AtGTID, GTID: gtid.MustParse(a("1-12"))}, nil},
		{"GTID: a backup holding transactions outside the target is past it", Target{Kind: AtGTID, GTID: gtid.MustParse(a("1-11"))}, ErrBaseBeyondTarget},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if err := CheckBase(md, tc.target); !errors.Is(err, tc.err) {
				t.Fatalf("got %v, want %v", err, tc.err)
			}
		})
	}
}
