package chaos

import (
	"slices"
	"testing"
	"time"
)

// TestClientPinning: one row per rule of how long a pooled client counts as pinned to the old
// primary.
func TestClientPinning(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	s := func(d float64) time.Time { return at.Add(time.Duration(d * float64(time.Second))) }
	f := Fault{Kind: Switchover, Primary: "db-1", At: at}
	newFirst, ready := s(2), s(30)
	for _, tc := range []struct {
		rule       string
		refused    []Refusal
		newPrimary string
		refusedN   int
		pinned     time.Duration
	}{
		{"no refusal: not pinned", nil, "db-2", 0, 0},
		{"refusals before the new primary's first write are the handover, not pinning",
			[]Refusal{{At: s(0.5), Host: "db-1"}, {At: s(1.9), Host: "db-1"}}, "db-2", 2, 0},
		{"a refusal by the old primary after the new one's first write pins the client until then",
			[]Refusal{{At: s(1), Host: "db-1"}, {At: s(6), Host: "db-1"}}, "db-2", 2, 4 * time.Second},
		{"refusals by another server do not count", []Refusal{{At: s(6), Host: "db-3"}}, "db-2", 0, 0},
		{"refusals before the fault or after the recovery do not count",
			[]Refusal{{At: s(-1), Host: "db-1"}, {At: s(31), Host: "db-1"}}, "db-2", 0, 0},
		{"the primary did not change: nothing to be pinned to", []Refusal{{At: s(6), Host: "db-1"}}, "db-1", 1, 0},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			w := &Writer{Kind: PooledSession, refused: tc.refused}
			got := measureClients([]*Writer{w}, f, tc.newPrimary, newFirst, ready)
			if len(got) != 1 || got[0].RefusedByOld != tc.refusedN || got[0].PinnedFor != tc.pinned {
				t.Errorf("got %+v; want %d refusals by the old primary, pinned %s", got, tc.refusedN, tc.pinned)
			}
			res := FaultResult{Fault: f, NewPrimary: tc.newPrimary, Clients: got}
			if pinned := len(res.clientProblems()) > 0; pinned != (tc.pinned > PinnedBudget) {
				t.Errorf("reported a problem %v (%v); want it when pinned beyond %s", pinned, res.clientProblems(), PinnedBudget)
			}
		})
	}
}

// TestMergeStats: the writers' acknowledged writes in time order, every unknown outcome and
// failure counted.
func TestMergeStats(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	a := WriterStats{Acks: []Ack{{ID: 1, At: at}, {ID: 2, At: at.Add(2 * time.Second)}}, Unknown: []int64{3}, Failed: 1}
	b := WriterStats{Acks: []Ack{{ID: 1_000_000_001, At: at.Add(time.Second)}}, Unknown: []int64{1_000_000_002}, Failed: 2}
	m := mergeStats(a, b)
	var ids []int64
	for _, x := range m.Acks {
		ids = append(ids, x.ID)
	}
	if !slices.Equal(ids, []int64{1, 1_000_000_001, 2}) || len(m.Unknown) != 2 || m.Failed != 3 {
		t.Errorf("merged acks %v, unknown %v, failed %d; want acks in time order, 2 unknown, 3 failed", ids, m.Unknown, m.Failed)
	}
}
