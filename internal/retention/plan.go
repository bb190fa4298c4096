package retention

import (
	"cmp"
	"math"
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
	backups := slices.Clone(inv.Backups)
	slices.SortStableFunc(backups, compareNewestFirst)

	var plan Plan
	if p.IsZero() {
		plan.Keep = nilIfEmpty(backups)
		return plan
	}

	reasons := expiryReasons(backups, p, now)
	for i, b := range backups {
		if len(reasons[i]) == 0 || i == 0 || b.Protected {
			plan.Keep = append(plan.Keep, b)
			continue
		}
		plan.Expire = append(plan.Expire, ExpiredBackup{BaseBackup: b, Reasons: reasons[i]})
		plan.ExpiredBytes += b.Size
	}

	plan.Horizon = horizon(plan.Keep)
	if plan.Horizon.IsZero() {
		return plan
	}
	for _, s := range inv.Segments {
		if SegmentExpired(s, plan.Horizon) {
			plan.DeleteSegments = append(plan.DeleteSegments, s)
			plan.SegmentBytes += s.Size
		}
	}
	return plan
}

// SegmentExpired reports whether a segment can no longer be replayed onto any backup started at
// or after horizon: its last event is known and before horizon. A zero horizon deletes nothing.
func SegmentExpired(s Segment, horizon time.Time) bool {
	return !horizon.IsZero() && !s.LastEventTime.IsZero() && s.LastEventTime.Before(horizon)
}

// compareNewestFirst orders backups by CompletedAt, then StartedAt, then Key, all descending.
func compareNewestFirst(a, b BaseBackup) int {
	if c := b.CompletedAt.Compare(a.CompletedAt); c != 0 {
		return c
	}
	if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.Key, a.Key)
}

// expiryReasons returns, for each backup of newest (sorted newest first), every policy of p
// that expires it, in the order window, count, size; floor and protection are not applied here.
func expiryReasons(newest []BaseBackup, p Policy, now time.Time) [][]Reason {
	reasons := make([][]Reason, len(newest))
	var cutoff time.Time
	if p.Window > 0 {
		cutoff = now.Add(-p.Window)
	}
	var total int64
	for i, b := range newest {
		if p.Window > 0 && b.CompletedAt.Before(cutoff) {
			reasons[i] = append(reasons[i], ReasonWindow)
		}
		if p.Count > 0 && i >= p.Count {
			reasons[i] = append(reasons[i], ReasonCount)
		}
		total = addSize(total, b.Size)
		if p.Size > 0 && total > p.Size {
			reasons[i] = append(reasons[i], ReasonSize)
		}
	}
	return reasons
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

func nilIfEmpty(b []BaseBackup) []BaseBackup {
	if len(b) == 0 {
		return nil
	}
	return b
}
