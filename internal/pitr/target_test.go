package pitr

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestTargetOf(t *testing.T) {
	when := metav1.NewMicroTime(at(3).Add(250 * time.Microsecond))
	for _, tc := range []struct {
		rule string
		in   *v1alpha1.RecoveryTarget
		want Kind
		ok   bool
	}{
		{"targetTime is a time target", &v1alpha1.RecoveryTarget{TargetTime: &when}, AtTime, true},
		{"targetGTID is a GTID target", &v1alpha1.RecoveryTarget{TargetGTID: a("1-5")}, AtGTID, true},
		{"targetLatest is the latest", &v1alpha1.RecoveryTarget{TargetLatest: true}, Latest, true},
		{"a malformed GTID set is refused", &v1alpha1.RecoveryTarget{TargetGTID: "nope"}, 0, false},
		{"none of the three is refused", &v1alpha1.RecoveryTarget{}, 0, false},
		{"no target is refused", nil, 0, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, err := TargetOf(tc.in)
			if (err == nil) != tc.ok || (tc.ok && got.Kind != tc.want) {
				t.Fatalf("got %+v, %v", got, err)
			}
			if tc.ok && got.Kind == AtTime && !got.Time.Equal(at(3).Add(250*time.Microsecond)) {
				t.Fatalf("time %v", got.Time)
			}
		})
	}
}
