package cluster

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestClusterStatusKeepsLastRetentionRunTime: the Cluster controller's status is built from the
// one it read, so its writes never wipe the stamp of a retention pass.
func TestClusterStatusKeepsLastRetentionRunTime(t *testing.T) {
	stamp := metav1.NewTime(time.Date(2026, 3, 1, 11, 59, 0, 0, time.UTC))
	d := newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").
		status(func(s *v1.ClusterStatus) { s.LastRetentionRunTime = &stamp }).decide()
	if d.Status.LastRetentionRunTime == nil || !d.Status.LastRetentionRunTime.Equal(&stamp) {
		t.Errorf("lastRetentionRunTime %v, want %v", d.Status.LastRetentionRunTime, stamp)
	}
}
