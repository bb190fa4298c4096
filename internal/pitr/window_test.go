package pitr

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

func TestRecoverableWindow(t *testing.T) {
	early := backupAt("early", 0, 1, a("1-5"))
	middle := backupAt("middle", 3, 3.5, a("1-12"))
	s3 := seg("s3", a("1-25"), a("26-30"), 8, 9)
	for _, tc := range []struct {
		rule     string
		backups  []*objectstore.Metadata
		segments []objectstore.Segment
		ok       bool
		from, to float64
		base     string
	}{
		{"the window runs from the end of the oldest backup to the newest archived transaction",
			[]*objectstore.Metadata{middle, early}, []objectstore.Segment{s0, s1, s2}, true, 1, 6, "b/early"},
		{"a backup the archive cannot carry past a gap does not open the window",
			[]*objectstore.Metadata{early, backupAt("late", 7, 7.5, a("1-25"))}, []objectstore.Segment{s0, s1, s3}, true, 7.5, 9, "b/late"},
		{"with nothing archived after the backup the window ends with it",
			[]*objectstore.Metadata{middle}, []objectstore.Segment{s0, s1}, true, 3.5, 3.5, "b/middle"},
		{"no backup, no window", nil, []objectstore.Segment{s0, s1, s2}, false, 0, 0, ""},
		{"no backup the archive carries, no window", []*objectstore.Metadata{early}, []objectstore.Segment{s0, s2}, false, 0, 0, ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			index := objectstore.NewIndex()
			index.Segments = append(index.Segments, tc.segments...)
			w, ok, err := RecoverableWindow(tc.backups, index)
			if err != nil || ok != tc.ok {
				t.Fatalf("got %+v, %v, %v", w, ok, err)
			}
			if ok && (!w.From.Equal(at(tc.from)) || !w.To.Equal(at(tc.to)) || w.Base != tc.base) {
				t.Fatalf("window %s .. %s from %s, want %s .. %s from %s", w.From, w.To, w.Base, at(tc.from), at(tc.to), tc.base)
			}
		})
	}
}
