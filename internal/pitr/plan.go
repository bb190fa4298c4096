package pitr

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// Plan is what a replay applies on top of a base backup.
type Plan struct {
	// Segments are the archived segments to download and apply, in replay order.
	Segments []objectstore.Segment
	// Expected is gtid_executed once the replay is done: exact for a GTID set and for latest;
	// for a time, the most the segments can give, which CutAtTime narrows once their events
	// are read.
	Expected gtid.Set
}

// segment is an index entry with its GTID sets parsed.
type segment struct {
	objectstore.Segment
	gtids, previous gtid.Set
	order           int
}

// PlanReplay decides which archived segments carry the base backup (gtid_executed base) to t,
// in which order, and checks that they chain without a gap:
//   - a segment is applied once every transaction before it (its Previous_gtids) is in the base
//     backup or in a segment applied before it; among those ready, the one whose first event
//     is oldest goes first (then index order);
//   - a segment adds nothing the target wants beyond what is already there: skipped;
//   - for a time, only segments whose first event is at or before it are applied, and a
//     segment entirely within the base backup whose last event is after it means the base
//     backup is past the target;
//   - a segment the target wants that cannot be reached is a gap (ErrGap), never skipped;
//   - a GTID target must be entirely in the base backup plus the chain, and a time target
//     must be reached by the chain: a chained segment whose last event is at or after it, or a
//     later segment that follows the chain directly; a later segment that does not follow it is
//     a gap (ErrGap), and no later segment at all is ErrBeyondArchive.
func PlanReplay(index *objectstore.Index, base gtid.Set, t Target) (Plan, error) {
	all, err := parseSegments(index)
	if err != nil {
		return Plan{}, err
	}
	if t.Kind == AtGTID && !t.GTID.Contains(base) {
		return Plan{}, fmt.Errorf("%w: it holds %s, outside the %s", ErrBaseBeyondTarget, base.Subtract(t.GTID), t)
	}
	want := func(s segment) gtid.Set {
		if t.Kind == AtGTID {
			return s.gtids.Intersect(t.GTID)
		}
		return s.gtids
	}
	var pending []segment
	for _, s := range all {
		inBase := base.Contains(s.gtids)
		if t.Kind == AtTime && inBase && !s.LastEventTime.IsZero() && s.LastEventTime.After(t.Time) {
			return Plan{}, fmt.Errorf("%w: its transactions include those of segment %s, whose last event (%s) is after the %s",
				ErrBaseBeyondTarget, s.Name, s.LastEventTime.UTC().Format(time.RFC3339Nano), t)
		}
		if base.Contains(want(s)) || (t.Kind == AtTime && !s.FirstEventTime.IsZero() && s.FirstEventTime.After(t.Time)) {
			continue
		}
		pending = append(pending, s)
	}
	have, chain, pending := chainSegments(pending, base, want)
	if len(pending) > 0 {
		return Plan{}, gapError(pending, have)
	}
	switch t.Kind {
	case AtGTID:
		if missing := t.GTID.Subtract(have); !missing.IsEmpty() {
			return Plan{}, fmt.Errorf("%w: no archived segment holds %s", ErrBeyondArchive, missing)
		}
	case AtTime:
		if !reachesTime(all, chain, have, t.Time) {
			if after := unchainedAfter(all, have, t.Time); after != "" {
				return Plan{}, fmt.Errorf("%w: segment %s, the next after the %s, does not follow the segments before it: "+
					"transactions committed before the target are missing from the archive", ErrGap, after, t)
			}
			return Plan{}, fmt.Errorf("%w: the newest transaction the archive holds without a gap after the base backup "+
				"committed at %s, before the %s; use targetLatest to replay everything archived",
				ErrBeyondArchive, lastEvent(chain, all, have), t)
		}
	}
	p := Plan{Expected: have}
	for _, s := range chain {
		p.Segments = append(p.Segments, s.Segment)
	}
	return p, nil
}

func parseSegments(index *objectstore.Index) ([]segment, error) {
	out := make([]segment, 0, len(index.Segments))
	for i, s := range index.Segments {
		gtids, err := gtid.Parse(s.GTIDRange)
		if err != nil {
			return nil, fmt.Errorf("segment %s: gtidRange: %w", s.Name, err)
		}
		previous, err := gtid.Parse(s.PreviousGTIDs)
		if err != nil {
			return nil, fmt.Errorf("segment %s: previousGtids: %w", s.Name, err)
		}
		out = append(out, segment{Segment: s, gtids: gtids, previous: previous, order: i})
	}
	return out, nil
}

// chainSegments applies the ready segment that comes first (earlier) until none is ready, and
// returns what the chain holds, the chain, and the segments left that still add something. The
// segments are sorted once and scanned from the first one not yet taken, so a chain in order
// costs one look per segment, however long the archive.
func chainSegments(pending []segment, base gtid.Set, want func(segment) gtid.Set) (gtid.Set, []segment, []segment) {
	slices.SortStableFunc(pending, func(a, b segment) int {
		if earlier(a, b) {
			return -1
		}
		if earlier(b, a) {
			return 1
		}
		return 0
	})
	have := base
	var chain []segment
	taken := make([]bool, len(pending))
	first := 0
	for i := first; i < len(pending); {
		s := pending[i]
		switch {
		case taken[i]:
		case have.Contains(want(s)): // nothing new any more: skipped
			taken[i] = true
		case have.Contains(s.previous):
			taken[i] = true
			chain = append(chain, s)
			have = gtid.Union(have, want(s))
			for first < len(pending) && taken[first] {
				first++
			}
			i = first // an earlier segment may be ready now
			continue
		}
		i++
	}
	var left []segment
	for i, s := range pending {
		if !taken[i] {
			left = append(left, s)
		}
	}
	return have, chain, left
}

func earlier(a, b segment) bool {
	if !a.FirstEventTime.Equal(b.FirstEventTime) {
		return a.FirstEventTime.Before(b.FirstEventTime)
	}
	return a.order < b.order
}

func gapError(pending []segment, have gtid.Set) error {
	var names []string
	missing := gtid.Set{}
	for _, s := range pending {
		names = append(names, s.Name)
		missing = gtid.Union(missing, s.previous.Subtract(have))
	}
	return fmt.Errorf("%w: segment(s) %s follow transactions %s that neither the base backup nor any archived segment holds",
		ErrGap, strings.Join(names, ", "), missing)
}

// reachesTime reports whether the chain is known to hold every transaction up to at: one of its
// segments ends at or after it, or a segment starting after it follows the chain directly.
func reachesTime(all, chain []segment, have gtid.Set, at time.Time) bool {
	for _, s := range chain {
		if !s.LastEventTime.Before(at) {
			return true
		}
	}
	for _, s := range all {
		if s.FirstEventTime.After(at) && have.Contains(s.previous) {
			return true
		}
	}
	return false
}

// unchainedAfter names a segment starting after at that does not follow the chain, "" for none.
func unchainedAfter(all []segment, have gtid.Set, at time.Time) string {
	for _, s := range all {
		if s.FirstEventTime.After(at) && !have.Contains(s.previous) {
			return s.Name
		}
	}
	return ""
}

// lastEvent is the latest event time the chain (or, with no chain, the segments the base backup
// holds) is known to reach, for messages.
func lastEvent(chain, all []segment, have gtid.Set) string {
	var last time.Time
	for _, s := range chain {
		last = maxTime(last, s.LastEventTime)
	}
	for _, s := range all {
		if have.Contains(s.gtids) {
			last = maxTime(last, s.LastEventTime)
		}
	}
	if last.IsZero() {
		return "an unknown time"
	}
	return last.UTC().Format(time.RFC3339Nano)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
