package schedule

import (
	"testing"
	"time"
)

// at is 2026-05-01 at the given UTC clock time.
func at(h, m, s int) time.Time { return time.Date(2026, 5, 1, h, m, s, 0, time.UTC) }

func TestPlan(t *testing.T) {
	hourly := "0 0 * * * *"
	cases := []struct {
		rule      string
		expr      string
		h         History
		now       time.Time
		due       time.Time
		first     time.Time
		missed    int
		next      time.Time
		wantNoDue bool
	}{
		{rule: "creation time is the reference when nothing ran: no slot due before the first",
			expr: hourly, h: History{Created: at(9, 30, 0)}, now: at(9, 59, 59), next: at(10, 0, 0)},
		{rule: "the first slot after creation is due at its second",
			expr: hourly, h: History{Created: at(9, 30, 0)}, now: at(10, 0, 0), due: at(10, 0, 0), next: at(11, 0, 0)},
		{rule: "a slot equal to the reference is not due again",
			expr: hourly, h: History{Created: at(9, 0, 0), LastSchedule: at(10, 0, 0)}, now: at(10, 30, 0), next: at(11, 0, 0)},
		{rule: "after downtime only the most recent missed slot is due",
			expr: hourly, h: History{Created: at(0, 0, 0), LastSchedule: at(2, 0, 0)}, now: at(7, 15, 0),
			due: at(7, 0, 0), first: at(3, 0, 0), missed: 4, next: at(8, 0, 0)},
		{rule: "lastSkipped later than lastScheduleTime is the reference",
			expr: hourly, h: History{LastSchedule: at(2, 0, 0), LastSkipped: at(6, 10, 0)}, now: at(6, 59, 0), next: at(7, 0, 0)},
		{rule: "lastScheduleTime later than lastSkipped is the reference",
			expr: hourly, h: History{LastSchedule: at(6, 0, 0), LastSkipped: at(2, 10, 0)}, now: at(6, 59, 0), next: at(7, 0, 0)},
		{rule: "lastSkipped alone is the reference",
			expr: hourly, h: History{Created: at(1, 0, 0), LastSkipped: at(5, 30, 0)}, now: at(6, 0, 1), due: at(6, 0, 0), next: at(7, 0, 0)},
		{rule: "sub-second times are whole seconds",
			expr: "* * * * * *", h: History{Created: at(1, 0, 0).Add(900 * time.Millisecond)}, now: at(1, 0, 1).Add(200 * time.Millisecond),
			due: at(1, 0, 1), next: at(1, 0, 2)},
		{rule: "a reference in the future (clock stepped back) makes nothing due",
			expr: hourly, h: History{LastSchedule: at(9, 0, 0)}, now: at(5, 30, 0), next: at(10, 0, 0)},
		{rule: "the missed count stops at its cap",
			expr: "* * * * * *", h: History{Created: at(1, 0, 0)}, now: at(2, 0, 0),
			due: at(2, 0, 0), first: at(1, 0, 1), missed: MissedCountCap, next: at(2, 0, 1)},
		{rule: "years of downtime resolve to the latest slot",
			expr: "0 0 2 * * *", h: History{Created: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}, now: at(1, 0, 0),
			due: time.Date(2026, 4, 30, 2, 0, 0, 0, time.UTC), first: time.Date(2020, 1, 1, 2, 0, 0, 0, time.UTC),
			missed: MissedCountCap, next: at(2, 0, 0)},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			got := mustParse(t, c.expr).Plan(c.h, c.now)
			want := Plan{Due: c.due, FirstMissed: c.first, Missed: c.missed, Next: c.next}
			if !got.Due.Equal(want.Due) || !got.FirstMissed.Equal(want.FirstMissed) ||
				got.Missed != want.Missed || !got.Next.Equal(want.Next) {
				t.Fatalf("Plan =\n %+v\nwant\n %+v", got, want)
			}
		})
	}
}

func TestPlanIsInUTCWhateverTheInputZone(t *testing.T) {
	s := mustParse(t, "0 0 2 * * *")
	tokyo := time.FixedZone("JST", 9*3600)
	created := time.Date(2026, 5, 1, 10, 0, 0, 0, tokyo) // 01:00 UTC
	now := time.Date(2026, 5, 1, 11, 0, 0, 0, tokyo)     // 02:00 UTC
	p := s.Plan(History{Created: created}, now)
	if want := at(2, 0, 0); !p.Due.Equal(want) || p.Due.Location() != time.UTC || p.Next.Location() != time.UTC {
		t.Fatalf("Plan = %+v, want due %v in UTC", p, want)
	}
}
