package pitr

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

func TestCutAtTime(t *testing.T) {
	sid := uuid.MustParse(uuidA)
	tx := func(gno int64, minute float64) Transaction {
		return Transaction{GTID: gtid.GTID{SID: sid, GNO: gno}, CommitTime: at(minute)}
	}
	for _, tc := range []struct {
		rule   string
		txns   []Transaction
		base   string
		target float64
		want   string
		err    error
	}{
		{"transactions committed at or before the target are replayed, later ones not",
			[]Transaction{tx(6, 1), tx(7, 2), tx(8, 2.5)}, a("1-5"), 2, a("6-7"), nil},
		{"the cut stops at the first transaction after the target, whatever follows",
			[]Transaction{tx(6, 1), tx(7, 3), tx(8, 1.5)}, a("1-5"), 2, a("6"), nil},
		{"transactions in the base backup are skipped", []Transaction{tx(4, 0.5), tx(5, 0.7), tx(6, 1)}, a("1-5"), 2, a("6"), nil},
		{"a transaction read twice (overlapping segments) counts once", []Transaction{tx(6, 1), tx(7, 1.5), tx(7, 1.5)}, a("1-5"), 2, a("6-7"), nil},
		{"nothing to replay when the first transaction after the base backup is after the target",
			[]Transaction{tx(6, 3)}, a("1-5"), 2, "", nil},
		{"a base backup transaction committed after the target means the base backup is past it",
			[]Transaction{tx(5, 3), tx(6, 4)}, a("1-5"), 2, "", ErrBaseBeyondTarget},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, err := CutAtTime(tc.txns, gtid.MustParse(tc.base), at(tc.target))
			if tc.err != nil || err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v, want %v", err, tc.err)
				}
				return
			}
			if !got.Equal(gtid.MustParse(tc.want)) {
				t.Fatalf("cut %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCutTakesWholeSegments(t *testing.T) {
	sid := uuid.MustParse(uuidA)
	tx := func(gno int64, minute float64) Transaction {
		return Transaction{GTID: gtid.GTID{SID: sid, GNO: gno}, CommitTime: at(minute)}
	}
	unknown := seg("unknown", a("1-5"), a("6-12"), 2, 3)
	unknown.LastEventTime = time.Time{}
	// The base backup holds 1-5; the target is minute 5; s1 (6-12) ends at 3, s2 (13-20) at 6.
	for _, tc := range []struct {
		rule   string
		steps  []any // a Segment is offered whole, a []Transaction is read
		wholes []bool
		want   string
	}{
		{"a segment ending at or before the target is taken whole, without the base backup's part",
			[]any{s1}, []bool{true}, a("6-12")},
		{"a segment ending after the target is read", []any{s1, s2, []Transaction{tx(13, 4), tx(14, 7)}},
			[]bool{true, false}, a("6-13")},
		{"a segment whose last event is unknown is read", []any{unknown}, []bool{false}, ""},
		{"a segment whose last event is less than a second before the target is read (tagged GTIDs are timed to the second)",
			[]any{seg("close", a("1-5"), a("6-12"), 2, 4.99)}, []bool{false}, ""},
		{"after the cut stopped, a segment ending before the target adds nothing",
			[]any{[]Transaction{tx(6, 8)}, s1}, []bool{true}, ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			c := NewCut(gtid.MustParse(a("1-5")), at(5))
			var wholes []bool
			for _, step := range tc.steps {
				switch st := step.(type) {
				case objectstore.Segment:
					w, err := c.Whole(st)
					if err != nil {
						t.Fatal(err)
					}
					wholes = append(wholes, w)
				case []Transaction:
					if err := c.Read(st); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !slices.Equal(wholes, tc.wholes) || !c.Set().Equal(gtid.MustParse(tc.want)) {
				t.Fatalf("whole %v, cut %q; want %v, %q", wholes, c.Set(), tc.wholes, tc.want)
			}
		})
	}
}
