package semisync

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

func TestSemiSyncHealthOf(t *testing.T) {
	for _, tc := range []struct {
		rule string
		st   *mysql.Status
		want bool
	}{
		{"no status is unhealthy", nil, false},
		{"a server that does not replicate is unhealthy", &mysql.Status{}, false},
		{"both threads running without error is healthy",
			&mysql.Status{Replication: &mysql.ReplicationStatus{IORunning: "Yes", SQLRunning: "Yes"}}, true},
		{"a receiver still connecting is unhealthy",
			&mysql.Status{Replication: &mysql.ReplicationStatus{IORunning: "Connecting", SQLRunning: "Yes"}}, false},
		{"a stopped applier is unhealthy",
			&mysql.Status{Replication: &mysql.ReplicationStatus{IORunning: "Yes", SQLRunning: "No"}}, false},
		{"an applier error is unhealthy",
			&mysql.Status{Replication: &mysql.ReplicationStatus{IORunning: "Yes", SQLRunning: "Yes", LastSQLErrno: 1062}}, false},
	} {
		if got := HealthOf("c-2", tc.st); got != (ReplicaHealth{Name: "c-2", Healthy: tc.want}) {
			t.Errorf("%s: %+v", tc.rule, got)
		}
	}
}
