package failover

import (
	"testing"
	"time"
)

func TestFallbackRecord(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	rec := FallbackRecord{Instance: "c-1", FellBackAt: at, GTIDExecuted: a("1-10").String()}
	t.Run("a record reads back as written", func(t *testing.T) {
		got, err := ParseFallbackRecord(rec.Encode())
		if err != nil || got == nil || got.Instance != "c-1" || !got.FellBackAt.Equal(at) || got.GTIDExecuted != rec.GTIDExecuted || got.Resumed {
			t.Fatalf("ParseFallbackRecord(Encode()) = %+v, %v", got, err)
		}
	})
	t.Run("no annotation is no record", func(t *testing.T) {
		if got, err := ParseFallbackRecord(""); got != nil || err != nil {
			t.Errorf("ParseFallbackRecord(\"\") = %+v, %v", got, err)
		}
	})
	for _, bad := range []string{"{", `{"fellBackAt":"2026-11-28T12:00:00Z"}`, "yes"} {
		t.Run("a value that does not parse is an error, never no record: "+bad, func(t *testing.T) {
			if _, err := ParseFallbackRecord(bad); err == nil {
				t.Errorf("ParseFallbackRecord(%q) accepted", bad)
			}
		})
	}
	resumed := rec
	resumed.Resumed, resumed.ResumedAt, resumed.ResumedGTIDSet = true, at.Add(time.Minute), a("1-20").String()
	for _, tc := range []struct {
		rule     string
		r        *FallbackRecord
		instance string
		want     bool
	}{
		{"at risk: the instance fell back and has not resumed", &rec, "c-1", true},
		{"not at risk: resumed since", &resumed, "c-1", false},
		{"not at risk: the record names another instance", &rec, "c-2", false},
		{"not at risk: no record", nil, "c-1", false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := tc.r.AtRisk(tc.instance); got != tc.want {
				t.Errorf("AtRisk(%s) = %v, want %v", tc.instance, got, tc.want)
			}
		})
	}
}
