package pitr

import (
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestTargetOf(t *testing.T) {
	when := at(3).Add(250 * time.Microsecond).Format(time.RFC3339Nano)
	for _, tc := range []struct {
		rule string
		in   *v1alpha1.RecoveryTarget
		want Kind
		ok   bool
		at   time.Time // for a time target
	}{
		{"targetTime is a time target", &v1alpha1.RecoveryTarget{TargetTime: when}, AtTime, true, at(3).Add(250 * time.Microsecond)},
		{"targetTime to the second is a time target", &v1alpha1.RecoveryTarget{TargetTime: "2026-11-25T04:00:00Z"}, AtTime, true,
			time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)},
		{"a targetTime that is no time is refused", &v1alpha1.RecoveryTarget{TargetTime: "yesterday"}, 0, false, time.Time{}},
		{"targetGTID is a GTID target", &v1alpha1.RecoveryTarget{TargetGTID: a("1-5")}, AtGTID, true, time.Time{}},
		{"targetLatest is the latest", &v1alpha1.RecoveryTarget{TargetLatest: true}, Latest, true, time.Time{}},
		{"a malformed GTID set is refused", &v1alpha1.RecoveryTarget{TargetGTID: "nope"}, 0, false, time.Time{}},
		{"none of the three is refused", &v1alpha1.RecoveryTarget{}, 0, false, time.Time{}},
		{"no target is refused", nil, 0, false, time.Time{}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, err := TargetOf(tc.in)
			if (err == nil) != tc.ok || (tc.ok && got.Kind != tc.want) {
				t.Fatalf("got %+v, %v", got, err)
			}
			if tc.ok && got.Kind == AtTime && !got.Time.Equal(tc.at) {
				t.Fatalf("time %v", got.Time)
			}
		})
	}
}
