package schedule

import (
	"testing"
	"time"
)

func TestMinInterval(t *testing.T) {
	from := time.Date(2026, 11, 29, 10, 17, 3, 0, time.UTC)
	for _, tc := range []struct {
		rule string
		expr string
		want time.Duration
	}{
		{"every second", "* * * * * *", time.Second},
		{"every 10 seconds", "*/10 * * * * *", 10 * time.Second},
		{"every minute", "0 * * * * *", time.Minute},
		{"nightly", "0 0 2 * * *", 24 * time.Hour},
		{"two slots a second apart within each hour: the short gap is found", "0,1 0 * * * *", time.Second},
		{"weekdays at 03:00: the shortest gap is a day", "0 0 3 * * 1-5", 24 * time.Hour},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			s, err := Parse(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.MinInterval(from); got != tc.want {
				t.Errorf("%s: %s, want %s", tc.expr, got, tc.want)
			}
		})
	}
}
