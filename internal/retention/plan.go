package retention

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"time"
)

// Decide plans a retention pass over inv under p at now. A base backup is expired when any
// configured policy expires it, except the newest completed backup (the floor: there is always
// something to recover from) and Protected backups, which are always kept. Segments whose last
// event predates the start of the oldest kept backup are deleted; a segment with an unknown last
// event is kept. A zero Policy keeps everything, deletes nothing and leaves Horizon zero. Decide
// does not modify inv.
func Decide(inv Inventory, p Policy, now time.Time) Plan {
	backups := sortedNewestFirst(inv.Backups)
	var plan Plan
	if p.IsZero() {
		if len(backups) > 0 {
			plan.Keep = backups
		}
		return plan
	}
	plan.Keep, plan.Expire, plan.ExpiredBytes = split(backups, expiryReasons(backups, p, now))
	plan.Horizon = horizon(plan.Keep)
	plan.DeleteSegments, plan.SegmentBytes = expiredSegments(inv.Segments, plan.Horizon)
	return plan
}

// reasonSet is a set of Reasons, one bit per policy in the order window, count, size.
type reasonSet uint8

const (
	expiredByWindow reasonSet = 1 << iota
	expiredByCount
	expiredBySize
)

// reasonOrder is the order in which Reasons are listed.
var reasonOrder = [...]struct {
	bit    reasonSet
	reason Reason
}{{expiredByWindow, ReasonWindow}, {expiredByCount, ReasonCount}, {expiredBySize, ReasonSize}}

// sortedNewestFirst returns a sorted copy of backups; backups equal in all three keys keep their
// input order, so the result depends only on the input.
func sortedNewestFirst(backups []BaseBackup) []BaseBackup {
	order := make([]int, len(backups))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		if c := compareNewestFirst(&backups[i], &backups[j]); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	sorted := make([]BaseBackup, len(backups))
	for k, i := range order {
		sorted[k] = backups[i]
	}
	return sorted
}

// compareNewestFirst orders backups by CompletedAt, then StartedAt, then Key, all descending.
func compareNewestFirst(a, b *BaseBackup) int {
	if c := b.CompletedAt.Compare(a.CompletedAt); c != 0 {
		return c
	}
	if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.Key, a.Key)
}

// expiryReasons returns, for each backup of newest (sorted newest first), the policies of p that
// expire it, and clears them for the newest backup and protected backups, which are never expired.
func expiryReasons(newest []BaseBackup, p Policy, now time.Time) []reasonSet {
	reasons := make([]reasonSet, len(newest))
	var cutoff time.Time
	if p.Window > 0 {
		cutoff = now.Add(-p.Window)
	}
	var total int64
	for i, b := range newest {
		if p.Window > 0 && b.CompletedAt.Before(cutoff) {
			reasons[i] |= expiredByWindow
		}
		if p.Count > 0 && i >= p.Count {
			reasons[i] |= expiredByCount
		}
		total = addSize(total, b.Size)
		if p.Size > 0 && total > p.Size {
			reasons[i] |= expiredBySize
		}
		if i == 0 || b.Protected {
			reasons[i] = 0
		}
	}
	return reasons
}

// split separates newest (which it reuses for the kept backups) into kept and expired backups,
// both newest first, and sums the expired sizes. The expired backups' Reasons share one backing
// array, each capped to its own length.
func split(newest []BaseBackup, reasons []reasonSet) ([]BaseBackup, []ExpiredBackup, int64) {
	expiredCount, reasonCount := 0, 0
	for _, r := range reasons {
		if r != 0 {
			expiredCount++
			reasonCount += bits.OnesCount8(uint8(r))
		}
	}
	if expiredCount == 0 {
		if len(newest) == 0 {
			return nil, nil, 0
		}
		return newest, nil, 0
	}
	expire := make([]ExpiredBackup, 0, expiredCount)
	listed := make([]Reason, 0, reasonCount)
	var bytes int64
	kept := 0
	for i, b := range newest {
		if reasons[i] == 0 {
			newest[kept] = b
			kept++
			continue
		}
		from := len(listed)
		for _, o := range reasonOrder {
			if reasons[i]&o.bit != 0 {
				listed = append(listed, o.reason)
			}
		}
		expire = append(expire, ExpiredBackup{BaseBackup: b, Reasons: listed[from:len(listed):len(listed)]})
		bytes += b.Size
	}
	return newest[:kept:kept], expire, bytes
}

// expiredSegments returns the segments SegmentExpired deletes at horizon, in their order, and
// their total size.
func expiredSegments(segments []Segment, horizon time.Time) ([]Segment, int64) {
	if horizon.IsZero() {
		return nil, 0
	}
	n := 0
	for i := range segments {
		if SegmentExpired(segments[i], horizon) {
			n++
		}
	}
	if n == 0 {
		return nil, 0
	}
	deleted := make([]Segment, 0, n)
	var bytes int64
	for i := range segments {
		if SegmentExpired(segments[i], horizon) {
			deleted = append(deleted, segments[i])
			bytes += segments[i].Size
		}
	}
	return deleted, bytes
}

// SegmentExpired reports whether a segment can no longer be replayed onto any backup started at
// or after horizon: its last event is known and before horizon. A zero horizon deletes nothing.
func SegmentExpired(s Segment, horizon time.Time) bool {
	return !horizon.IsZero() && !s.LastEventTime.IsZero() && s.LastEventTime.Before(horizon)
}

// addSize adds a backup's size to a running total, counting a negative size as zero and
// saturating instead of overflowing, so a corrupt size cannot make older backups fit.
func addSize(total, size int64) int64 {
	if size <= 0 {
		return total
	}
	if total > math.MaxInt64-size {
		return math.MaxInt64
	}
	return total + size
}

// horizon is the earliest StartedAt of the kept backups, or zero when nothing is kept or any kept
// backup's start is unknown (deleting binlogs then could cut a kept backup off from them).
func horizon(keep []BaseBackup) time.Time {
	var h time.Time
	for i, b := range keep {
		if b.StartedAt.IsZero() {
			return time.Time{}
		}
		if i == 0 || b.StartedAt.Before(h) {
			h = b.StartedAt
		}
	}
	return h
}
