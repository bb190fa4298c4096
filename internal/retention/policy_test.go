package retention

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func int32p(n int32) *int32 { return &n }

func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

func TestPolicyFromSpec(t *testing.T) {
	cases := []struct {
		name    string
		spec    *v1alpha1.BackupConfiguration
		want    Policy
		wantErr string
	}{
		{name: "no backup configuration is the zero policy", spec: nil},
		{name: "no retention fields is the zero policy", spec: &v1alpha1.BackupConfiguration{}},
		{
			name: "a window in days",
			spec: &v1alpha1.BackupConfiguration{RetentionPolicy: "30d"},
			want: Policy{Window: 30 * 24 * time.Hour},
		},
		{
			name: "a month is 30 days",
			spec: &v1alpha1.BackupConfiguration{RetentionPolicy: "2m"},
			want: Policy{Window: 60 * 24 * time.Hour},
		},
		{
			name: "a count",
			spec: &v1alpha1.BackupConfiguration{RetentionCount: int32p(7)},
			want: Policy{Count: 7},
		},
		{
			name: "a size in bytes from a binary quantity",
			spec: &v1alpha1.BackupConfiguration{RetentionSize: quantity("500Gi")},
			want: Policy{Size: 500 << 30},
		},
		{
			name: "all three",
			spec: &v1alpha1.BackupConfiguration{
				RetentionPolicy: "1w", RetentionCount: int32p(3), RetentionSize: quantity("10G")},
			want: Policy{Window: 7 * 24 * time.Hour, Count: 3, Size: 10_000_000_000},
		},
		{
			name:    "a malformed window is an error",
			spec:    &v1alpha1.BackupConfiguration{RetentionPolicy: "30x"},
			wantErr: "retentionPolicy",
		},
		{
			name:    "a count below one is an error",
			spec:    &v1alpha1.BackupConfiguration{RetentionCount: int32p(0)},
			wantErr: "retentionCount",
		},
		{
			name:    "a size of zero is an error",
			spec:    &v1alpha1.BackupConfiguration{RetentionSize: quantity("0")},
			wantErr: "retentionSize",
		},
		{
			name: "a size beyond int64 keeps everything by size rather than wrapping to a byte",
			spec: &v1alpha1.BackupConfiguration{RetentionSize: quantity("18446744073709551617")},
			want: Policy{Size: math.MaxInt64},
		},
		{
			name: "a size beyond int64 in exabytes is a budget, not zero",
			spec: &v1alpha1.BackupConfiguration{RetentionSize: quantity("100E")},
			want: Policy{Size: math.MaxInt64},
		},
		{
			name:    "a negative size is an error",
			spec:    &v1alpha1.BackupConfiguration{RetentionSize: quantity("-1Gi")},
			wantErr: "retentionSize",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PolicyFromSpec(c.spec)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("PolicyFromSpec = %+v, %v; want an error about %s", got, err, c.wantErr)
				}
				if got != (Policy{}) {
					t.Errorf("PolicyFromSpec returned %+v with its error, want the zero policy", got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("PolicyFromSpec = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// TestPolicyFromSpecWrapsTheWindowError checks that the parser's error is wrapped, not replaced.
func TestPolicyFromSpecWrapsTheWindowError(t *testing.T) {
	_, parseErr := v1alpha1.ParseRetentionWindow("0d")
	_, err := PolicyFromSpec(&v1alpha1.BackupConfiguration{RetentionPolicy: "0d"})
	inner := errors.Unwrap(err)
	if parseErr == nil || inner == nil || inner.Error() != parseErr.Error() {
		t.Fatalf("PolicyFromSpec error = %v, want it to wrap %v", err, parseErr)
	}
}
