package pitr

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

const (
	uuidA = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
	uuidB = "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"
)

var t0 = time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)

// at is t0 plus n minutes.
func at(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Minute))) }

// a and b write GTID sets of the two servers in tables: a("1-5") is uuidA:1-5.
func a(r string) string { return uuidA + ":" + r }
func b(r string) string { return uuidB + ":" + r }

func seg(name, previous, gtids string, first, last float64) objectstore.Segment {
	return objectstore.Segment{Name: name, PreviousGTIDs: previous, GTIDRange: gtids, FirstEventTime: at(first),
		LastEventTime: at(last), SHA256: fmt.Sprintf("%064x", len(name))}
}

// The archive of one server: s0 holds 1-5 (minutes 0-1), s1 6-12 (2-3), s2 13-20 (4-6).
var (
	s0 = seg("s0", "", a("1-5"), 0, 1)
	s1 = seg("s1", a("1-5"), a("6-12"), 2, 3)
	s2 = seg("s2", a("1-12"), a("13-20"), 4, 6)
)

func TestPlanReplay(t *testing.T) {
	latest := Target{Kind: Latest}
	byTime := func(n float64) Target { return Target{Kind: AtTime, Time: at(n)} }
	byGTID := func(s string) Target { return Target{Kind: AtGTID, GTID: gtid.MustParse(s)} }
	for _, tc := range []struct {
		rule     string
		segments []objectstore.Segment
		base     string
		target   Target
		want     []string // segment names in replay order
		expected string
		err      error
	}{
		{rule: "latest: every segment after the base backup, in chain order", segments: []objectstore.Segment{s0, s1, s2},
			base: a("1-5"), target: latest, want: []string{"s1", "s2"}, expected: a("1-20")},
		{rule: "a segment entirely in the base backup is not replayed", segments: []objectstore.Segment{s0, s1, s2},
			base: a("1-12"), target: latest, want: []string{"s2"}, expected: a("1-20")},
		{rule: "a base backup that ends inside a segment replays that segment (the server skips what it has)",
			segments: []objectstore.Segment{s0, s1, s2}, base: a("1-9"), target: latest, want: []string{"s1", "s2"}, expected: a("1-20")},
		{rule: "segments chain by Previous_gtids, not by their order in the index", segments: []objectstore.Segment{s2, s0, s1},
			base: a("1-5"), target: latest, want: []string{"s1", "s2"}, expected: a("1-20")},
		{rule: "after a switchover the new primary's overlapping segment adds what is new",
			segments: []objectstore.Segment{s0, s1, seg("b1", a("1-10"), a("11-12")+","+b("1-4"), 3, 5), seg("b2", a("1-12")+","+b("1-4"), b("5-9"), 6, 7)},
			base:     a("1-5"), target: latest, want: []string{"s1", "b1", "b2"}, expected: a("1-12") + "," + b("1-9")},
		{rule: "a segment whose transactions the segments before it already hold is skipped",
			segments: []objectstore.Segment{s0, s1, seg("dup", a("1-5"), a("6-9"), 2, 2.5), s2},
			base:     a("1-5"), target: latest, want: []string{"s1", "s2"}, expected: a("1-20")},
		{rule: "an empty archive replays nothing and expects the base backup", segments: nil,
			base: a("1-5"), target: latest, want: nil, expected: a("1-5")},
		{rule: "a segment missing between the base backup and the next one is a gap", segments: []objectstore.Segment{s0, s2},
			base: a("1-5"), target: latest, err: ErrGap},
		{rule: "a segment missing between two segments is a gap", segments: []objectstore.Segment{s0, s1, seg("s3", a("1-25"), a("26-30"), 8, 9)},
			base: a("1-5"), target: latest, err: ErrGap},
		{rule: "a base backup older than the archive's first segment is a gap", segments: []objectstore.Segment{s1, s2},
			base: a("1-3"), target: latest, err: ErrGap},

		{rule: "GTID: only the target's transactions are expected, from the segments holding them",
			segments: []objectstore.Segment{s0, s1, s2}, base: a("1-5"), target: byGTID(a("1-15")), want: []string{"s1", "s2"}, expected: a("1-15")},
		{rule: "GTID: a gap after the target does not matter", segments: []objectstore.Segment{s0, s1, seg("s3", a("1-25"), a("26-30"), 8, 9)},
			base: a("1-5"), target: byGTID(a("1-12")), want: []string{"s1"}, expected: a("1-12")},
		{rule: "GTID: a target the archive does not hold is beyond it", segments: []objectstore.Segment{s0, s1, s2},
			base: a("1-5"), target: byGTID(a("1-25")), err: ErrBeyondArchive},
		{rule: "GTID: a base backup holding transactions outside the target is past it", segments: []objectstore.Segment{s0, s1, s2},
			base: a("1-12"), target: byGTID(a("1-8")), err: ErrBaseBeyondTarget},
		{rule: "GTID: a gap before the target's transactions is a gap", segments: []objectstore.Segment{s0, s2},
			base: a("1-5"), target: byGTID(a("1-15")), err: ErrGap},

		{rule: "time: segments whose first event is after the target are not replayed", segments: []objectstore.Segment{s0, s1, s2},
			base: a("1-5"), target: byTime(3.5), want: []string{"s1"}, expected: a("1-12")},
		{rule: "time: a target inside a segment replays it (its events decide the cut)", segments: []objectstore.Segment{s0, s1, s2},
			base: a("1-5"), target: byTime(5), want: []string{"s1", "s2"}, expected: a("1-20")},
		{rule: "time: a target at the newest archived event is reached", segments: []objectstore.Segment{s0, s1, s2},
			base: a("1-5"), target: byTime(6), want: []string{"s1", "s2"}, expected: a("1-20")},
		{rule: "time: a target after the newest archived event is beyond the archive", segments: []objectstore.Segment{s0, s1, s2},
			base: a("1-5"), target: byTime(6.5), err: ErrBeyondArchive},
		{rule: "time: nothing to replay when the next transaction after the base backup is after the target",
			segments: []objectstore.Segment{s0, s1, s2}, base: a("1-12"), target: byTime(3.5), want: nil, expected: a("1-12")},
		{rule: "time: a segment missing just before the target is a gap even when a later segment exists",
			segments: []objectstore.Segment{s0, s1, seg("s3", a("1-25"), a("26-30"), 8, 9)}, base: a("1-5"), target: byTime(5), err: ErrGap},
		{rule: "time: a base backup holding a segment whose last event is after the target is past it",
			segments: []objectstore.Segment{s0, s1, s2}, base: a("1-12"), target: byTime(2.5), err: ErrBaseBeyondTarget},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			index := objectstore.NewIndex()
			index.Segments = append(index.Segments, tc.segments...)
			p, err := PlanReplay(index, gtid.MustParse(tc.base), tc.target)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v (plan %v), want %v", err, names(p), tc.err)
				}
				t.Logf("refused: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p); !slices.Equal(got, tc.want) {
				t.Fatalf("segments %v, want %v", got, tc.want)
			}
			if !p.Expected.Equal(gtid.MustParse(tc.expected)) {
				t.Fatalf("expected %s, want %s", p.Expected, tc.expected)
			}
		})
	}
}

func names(p Plan) []string {
	var out []string
	for _, s := range p.Segments {
		out = append(out, s.Name)
	}
	return out
}
