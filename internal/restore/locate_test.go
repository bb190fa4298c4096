package restore

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

func TestNewest(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	md := func(name, id string, started, stopped time.Duration) *objectstore.Metadata {
		return &objectstore.Metadata{BackupName: name, BackupID: id, StartedAt: t0.Add(started), StoppedAt: t0.Add(stopped)}
	}
	for _, tc := range []struct {
		name    string
		backups []*objectstore.Metadata
		want    string
	}{
		{"none is nil", nil, ""},
		{"the one that ended last wins", []*objectstore.Metadata{md("a", "1", 0, 3*time.Hour), md("b", "1", time.Hour, 2*time.Hour)}, "a/1"},
		{"listing order does not matter", []*objectstore.Metadata{md("b", "1", time.Hour, 2*time.Hour), md("a", "1", 0, 3*time.Hour)}, "a/1"},
		{"on equal ends the later start wins", []*objectstore.Metadata{md("a", "1", 0, time.Hour), md("b", "1", time.Minute, time.Hour)}, "b/1"},
		{"on equal times the greater directory wins", []*objectstore.Metadata{md("a", "2", 0, time.Hour), md("a", "1", 0, time.Hour)}, "a/2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Newest(tc.backups)
			name := ""
			if got != nil {
				name = got.BackupName + "/" + got.BackupID
			}
			if name != tc.want {
				t.Errorf("Newest = %q, want %q", name, tc.want)
			}
		})
	}
}

func TestOfIncarnation(t *testing.T) {
	a1 := &objectstore.Metadata{BackupName: "a1", ClusterUID: "uid-a"}
	a2 := &objectstore.Metadata{BackupName: "a2", ClusterUID: "uid-a"}
	b1 := &objectstore.Metadata{BackupName: "b1", ClusterUID: "uid-b"}
	legacy := &objectstore.Metadata{BackupName: "old"}
	all := []*objectstore.Metadata{a1, b1, legacy, a2}
	for _, tc := range []struct {
		rule string
		uid  string
		want []*objectstore.Metadata
		err  error
	}{
		{rule: "no incarnation asked: every backup", uid: "", want: all},
		{rule: "an incarnation: only the backups recording its uid", uid: "uid-a", want: []*objectstore.Metadata{a1, a2}},
		{rule: "an incarnation that wrote none: ErrNoBackup", uid: "uid-c", err: ErrNoBackup},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, err := OfIncarnation(all, tc.uid)
			if !errors.Is(err, tc.err) || !slices.Equal(got, tc.want) {
				t.Errorf("got %v, %v; want %v, %v", got, err, tc.want, tc.err)
			}
		})
	}
}
