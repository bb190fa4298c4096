package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	cases := []struct {
		rule    string
		expr    string
		wantErr string
	}{
		{rule: "six fields with seconds are accepted", expr: "0 0 2 * * *"},
		{rule: "steps and ranges are accepted", expr: "30 0 */6 * * 1-5"},
		{rule: "surrounding and repeated whitespace is ignored", expr: "  0  */15 * * * *\t"},
		{rule: "question mark in day fields is accepted", expr: "0 0 0 ? * MON"},
		{rule: "five-field unix cron is rejected", expr: "0 2 * * *", wantErr: "has 5 fields"},
		{rule: "seven fields are rejected", expr: "0 0 2 * * * 2030", wantErr: "has 7 fields"},
		{rule: "empty is rejected", expr: "", wantErr: "has 0 fields"},
		{rule: "descriptors are rejected", expr: "@daily", wantErr: "has 1 fields"},
		{rule: "time-zone prefix is rejected", expr: "CRON_TZ=Asia/Tokyo 0 2 * * *", wantErr: "time-zone prefixes"},
		{rule: "out of range second is rejected", expr: "60 0 2 * * *", wantErr: "parsing"},
		{rule: "zero step is rejected", expr: "*/0 * * * * *", wantErr: "parsing"},
		{rule: "a date that never exists is rejected", expr: "0 0 0 31 2 *", wantErr: "matches no date"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			s, err := Parse(c.expr)
			if c.wantErr == "" {
				if err != nil || s.IsZero() {
					t.Fatalf("Parse(%q) = %v, want success", c.expr, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Parse(%q) error = %v, want one containing %q", c.expr, err, c.wantErr)
			}
		})
	}
}

func TestParseFiveFieldsWrapsErrFieldCount(t *testing.T) {
	if _, err := Parse("0 2 * * *"); !errors.Is(err, ErrFieldCount) {
		t.Fatalf("error %v does not wrap ErrFieldCount", err)
	}
}

func TestNextIsTheFollowingWholeUTCSecond(t *testing.T) {
	s := mustParse(t, "30 0 */6 * * *")
	tokyo := time.FixedZone("JST", 9*3600)
	in := time.Date(2026, 3, 1, 9, 0, 29, 500_000_000, tokyo) // 00:00:29.5 UTC
	got := s.Next(in)
	want := time.Date(2026, 3, 1, 0, 0, 30, 0, time.UTC)
	if !got.Equal(want) || got.Location() != time.UTC {
		t.Fatalf("Next(%v) = %v, want %v in UTC", in, got, want)
	}
	if again := s.Next(got); !again.Equal(want.Add(6 * time.Hour)) {
		t.Fatalf("Next(slot) = %v, want the slot after it", again)
	}
}

func mustParse(t testing.TB, expr string) Schedule {
	t.Helper()
	s, err := Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
