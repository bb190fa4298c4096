package schedule

import (
	"testing"
	"time"
)

// FuzzParse checks that Parse never panics, that whatever it accepts has six fields and fires,
// and that Plan agrees with a slot-by-slot walk.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"0 0 2 * * *", "*/15 * * * * *", "30 0 */6 * * *", "0 2 * * *", "@daily", "TZ=UTC",
		"CRON_TZ=UTC 0 0 2 * *", "0 0 0 29 2 *", "0 0 0 31 2 *", "1-59/7 1,2,3 * * JAN-MAR SUN", "? ? ? ? ? ?",
	} {
		f.Add(seed, int64(0), uint16(300))
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr string, refOffset int64, span uint16) {
		s, err := Parse(expr)
		if err != nil {
			return
		}
		ref := base.Add(time.Duration(refOffset%(400*24*3600)) * time.Second)
		now := ref.Add(time.Duration(span) * time.Second)
		p := s.Plan(History{Created: ref}, now)
		want, count := walk(s, ref, now)
		if !p.Due.Equal(want) {
			t.Fatalf("%q: Plan(%v, %v).Due = %v, walking gives %v", expr, ref, now, p.Due, want)
		}
		if wantMissed := min(max(count-1, 0), MissedCountCap); p.Missed != wantMissed {
			t.Fatalf("%q: Missed = %d, want %d", expr, p.Missed, wantMissed)
		}
		if !p.Next.IsZero() && (!p.Next.After(now) || p.Next.Nanosecond() != 0 || p.Next.Location() != time.UTC) {
			t.Fatalf("%q: Next %v is not a whole UTC second after %v", expr, p.Next, now)
		}
	})
}

// walk returns the last slot in (ref, now] and how many slots that interval holds, one by one.
func walk(s Schedule, ref, now time.Time) (time.Time, int) {
	var last time.Time
	n := 0
	for t := s.Next(ref); !t.IsZero() && !t.After(now); t = s.Next(t) {
		last = t
		n++
	}
	return last, n
}
