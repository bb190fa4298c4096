package retention

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestDescribePolicy(t *testing.T) {
	size := resource.MustParse("10Gi")
	b := &v1.BackupConfiguration{RetentionPolicy: "30d", RetentionCount: ptrInt32(5), RetentionSize: &size}
	if got, want := describePolicy(b), "window 30d, count 5, size 10Gi"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := describePolicy(nil); got != "none" {
		t.Errorf("%q", got)
	}
}
