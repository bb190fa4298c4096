package v1alpha1

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// timeRow is one string sent as a time field. admitted is what the API server does with it
// (format date-time and the field's pattern); decodes is what the Go type does with it. They are
// equal, except in rows whose name says the schema is stricter than the decoder: the schema must
// never admit what does not decode.
type timeRow struct {
	name     string
	value    string
	admitted bool
	decodes  bool
}

var metav1TimeRows = []timeRow{
	{"as metav1.Time writes it", "2026-11-25T04:00:00Z", true, true},
	{"a lower-case t", "2026-11-25t04:00:00Z", false, false},
	{"a lower-case z", "2026-11-25T04:00:00z", false, false},
	{"a positive offset", "2026-11-25T04:00:00+05:30", true, true},
	{"a negative offset", "2026-11-25T04:00:00-08:00", true, true},
	{"a zero offset written -00:00", "2026-11-25T04:00:00-00:00", true, true},
	{"one fractional digit", "2026-11-25T04:00:00.5Z", true, true},
	{"six fractional digits", "2026-11-25T04:00:00.123456Z", true, true},
	{"nine fractional digits with an offset", "2026-11-25T04:00:00.123456789+01:00", true, true},
	{"a dot without digits", "2026-11-25T04:00:00.Z", false, false},
	{"no zone", "2026-11-25T04:00:00", false, false},
	{"an offset without a colon", "2026-11-25T04:00:00+0530", false, false},
	{"an offset of hours only", "2026-11-25T04:00:00+05", false, false},
	{"offset hour 25", "2026-11-25T04:00:00+25:00", false, false},
	{"hour 24", "2026-11-25T24:00:00Z", false, false},
	{"a leap second", "2026-11-25T23:59:60Z", false, false},
	{"February 30 (refused by format date-time)", "2026-02-30T04:00:00Z", false, false},
	{"month 13", "2026-13-25T04:00:00Z", false, false},
	{"a space instead of T", "2026-11-25 04:00:00Z", false, false},
	{"a trailing newline", "2026-11-25T04:00:00Z\n", false, false},
	{"a second Z", "2026-11-25T04:00:00ZZ", false, false},
	{"empty", "", false, false},
	{"schema stricter than the decoder: a comma before the fraction", "2026-11-25T04:00:00,5Z", false, true},
	{"schema stricter than the decoder: offset hour 24 (not RFC 3339)", "2026-11-25T04:00:00+24:00", false, true},
	{"schema stricter than the decoder: offset minute 60 (not RFC 3339)", "2026-11-25T04:00:00+23:60", false, true},
	{"schema stricter than the decoder: a one-digit hour (refused by format date-time)", "2026-11-25T4:00:00Z", false, true},
}

var metav1MicroTimeRows = []timeRow{
	{"as metav1.MicroTime writes it", "2026-11-25T04:00:00.000000Z", true, true},
	{"six fractional digits with an offset", "2026-11-25T04:00:00.123456+05:30", true, true},
	{"no fraction", "2026-11-25T04:00:00Z", false, false},
	{"three fractional digits", "2026-11-25T04:00:00.123Z", false, false},
	{"five fractional digits", "2026-11-25T04:00:00.12345Z", false, false},
	{"seven fractional digits", "2026-11-25T04:00:00.1234567Z", false, false},
	{"nine fractional digits", "2026-11-25T04:00:00.123456789Z", false, false},
	{"a lower-case t", "2026-11-25t04:00:00.123456Z", false, false},
	{"a lower-case z", "2026-11-25T04:00:00.123456z", false, false},
	{"a letter in the fraction", "2026-11-25T04:00:00.a23456Z", false, false},
	{"an offset without a colon", "2026-11-25T04:00:00.123456+0530", false, false},
	{"hour 24", "2026-11-25T24:00:00.000000Z", false, false},
	{"schema stricter than the decoder: a comma before the fraction", "2026-11-25T04:00:00,123456Z", false, true},
}

func TestTimePatternMatchesTheDecoder(t *testing.T) {
	checkTimeRows(t, TimePattern, metav1TimeRows, func(b []byte) error { return json.Unmarshal(b, &metav1.Time{}) })
}

func TestMicroTimePatternMatchesTheDecoder(t *testing.T) {
	checkTimeRows(t, MicroTimePattern, metav1MicroTimeRows, func(b []byte) error { return json.Unmarshal(b, &metav1.MicroTime{}) })
}

func checkTimeRows(t *testing.T, pattern string, rows []timeRow, decode func([]byte) error) {
	t.Helper()
	re := regexp.MustCompile(pattern) // the API server checks pattern with Go's regexp
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			b, err := json.Marshal(r.value)
			if err != nil {
				t.Fatal(err)
			}
			admitted := re.MatchString(r.value) && strfmt.IsDateTime(r.value)
			err = decode(b)
			if admitted != r.admitted || (err == nil) != r.decodes {
				t.Errorf("%q: admitted %v (pattern %v, format %v), decodes %v (%v); want admitted %v, decodes %v",
					r.value, admitted, re.MatchString(r.value), strfmt.IsDateTime(r.value), err == nil, err, r.admitted, r.decodes)
			}
			if admitted && err != nil {
				t.Errorf("%q is admitted and does not decode: %v", r.value, err)
			}
		})
	}
}

// TestTimePatternsAdmitWhatTheTypesWrite: the operator and the instance manager write these
// fields through the Go types; every time they can write must be admitted.
func TestTimePatternsAdmitWhatTheTypesWrite(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	for _, at := range []time.Time{
		time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 25, 4, 0, 0, 123456789, tokyo),
		time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), // the zero time is written as null, which no pattern sees
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Now(),
	} {
		for _, c := range []struct {
			pattern string
			value   any
		}{{TimePattern, metav1.NewTime(at)}, {MicroTimePattern, metav1.NewMicroTime(at)}} {
			b, err := json.Marshal(c.value)
			if err != nil {
				t.Fatal(err)
			}
			var s string
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(c.pattern).MatchString(s) || !strfmt.IsDateTime(s) {
				t.Errorf("%T %v is written as %q, which the schema refuses", c.value, at, s)
			}
		}
	}
}
