package schedule

import "time"

// MissedCountCap bounds how many missed slots Plan counts; a count at the cap means "at least".
const MissedCountCap = 100

// History is what a schedule has done so far. Zero times are unset.
type History struct {
	// Created is when the ScheduledBackup was created.
	Created time.Time
	// LastSchedule is the last slot that produced or adopted a Backup.
	LastSchedule time.Time
	// LastSkipped is the last slot or moment deliberately not run.
	LastSkipped time.Time
}

// Reference is the instant slots are counted from: the later of LastSchedule and LastSkipped, or
// Created when neither is set. Only slots strictly after it can be due.
func (h History) Reference() time.Time {
	ref := h.LastSchedule
	if h.LastSkipped.After(ref) {
		ref = h.LastSkipped
	}
	if ref.IsZero() {
		ref = h.Created
	}
	return ref.UTC().Truncate(time.Second)
}

// Plan is what a schedule asks for at one instant.
type Plan struct {
	// Due is the most recent slot after the reference and not after now; zero when none is due.
	// Only this slot may run: older missed slots never do.
	Due time.Time
	// FirstMissed is the earliest slot after the reference when it is older than Due; zero when no
	// slot was missed.
	FirstMissed time.Time
	// Missed counts the slots from FirstMissed up to Due (excluded), at most MissedCountCap.
	Missed int
	// Next is the first slot after now (or after the reference when that is later); zero when the
	// schedule has no slot within five years.
	Next time.Time
}

// Plan computes the due, missed and next slots of s for history h at now.
func (s Schedule) Plan(h History, now time.Time) Plan {
	ref := h.Reference()
	now = now.UTC().Truncate(time.Second)
	var p Plan
	if first := s.Next(ref); !first.IsZero() && !first.After(now) {
		p.Due = s.latestNotAfter(ref, now)
		if first.Before(p.Due) {
			p.FirstMissed = first
			p.Missed = s.countBetween(first, p.Due)
		}
	}
	from := now
	if ref.After(from) {
		from = ref
	}
	p.Next = s.Next(from)
	return p
}

// latestNotAfter returns the last slot in (ref, now]; the caller has checked that Next(ref) is
// not after now. It bisects on whole seconds: for lo, Next(lo) <= now; for hi, Next(hi) > now.
// When they are a second apart, hi is the latest slot. This stays fast across years of downtime.
func (s Schedule) latestNotAfter(ref, now time.Time) time.Time {
	lo, hi := ref, now
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
		if n := s.Next(mid); !n.IsZero() && !n.After(now) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return s.Next(lo)
}

// countBetween counts slots in [from, to), at most MissedCountCap.
func (s Schedule) countBetween(from, to time.Time) int {
	n := 0
	for t := from; !t.IsZero() && t.Before(to) && n < MissedCountCap; t = s.Next(t) {
		n++
	}
	return n
}
