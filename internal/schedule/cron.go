package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// FieldCount is the number of fields a schedule has: second minute hour day-of-month month
// day-of-week.
const FieldCount = 6

// parser accepts exactly six fields, seconds first, and no descriptors such as @daily.
var parser = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// neverProbe is the instant from which Parse checks that a schedule ever fires. The cron library
// looks five years ahead, which covers every leap day.
var neverProbe = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// ErrFieldCount is returned for an expression without exactly six fields; a five-field Unix cron
// is the usual cause.
var ErrFieldCount = errors.New("a schedule has six fields: second minute hour day-of-month month day-of-week")

// Schedule is a parsed cron expression evaluated in UTC.
type Schedule struct {
	spec *cron.SpecSchedule
}

// Parse parses a six-field cron expression with seconds. Five-field expressions, descriptors
// (@daily), time-zone prefixes and expressions that match no date are rejected.
func Parse(expr string) (Schedule, error) {
	fields := strings.Fields(expr)
	if len(fields) != FieldCount {
		return Schedule{}, fmt.Errorf("%q has %d fields: %w", expr, len(fields), ErrFieldCount)
	}
	if strings.Contains(fields[0], "=") {
		return Schedule{}, fmt.Errorf("%q: time-zone prefixes are not supported, schedules are in UTC", expr)
	}
	parsed, err := parser.Parse(strings.Join(fields, " "))
	if err != nil {
		return Schedule{}, fmt.Errorf("parsing %q: %w", expr, err)
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return Schedule{}, fmt.Errorf("parsing %q: unexpected schedule type %T", expr, parsed)
	}
	spec.Location = time.UTC
	s := Schedule{spec: spec}
	if s.Next(neverProbe).IsZero() {
		return Schedule{}, fmt.Errorf("%q matches no date", expr)
	}
	return s, nil
}

// Next is the first slot strictly after t, in UTC and on a whole second; the zero time when the
// schedule has no slot within five years of t.
func (s Schedule) Next(t time.Time) time.Time {
	return s.spec.Next(t.UTC())
}

// IsZero reports whether s was not produced by Parse.
func (s Schedule) IsZero() bool {
	return s.spec == nil
}
