package probes

import (
	"strings"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

func TestDecideReadiness(t *testing.T) {
	replica := func(r mysql.ReplicationStatus) *mysql.Status {
		return &mysql.Status{ReadOnly: true, SuperReadOnly: true, Replication: &r}
	}
	for _, tc := range []struct {
		name     string
		st       *mysql.Status
		diverged bool
		want     bool
	}{
		{"mysqld not answering: not ready", nil, false, false},
		{"the writable primary: ready", &mysql.Status{}, false, true},
		{"a healthy replica: ready", replica(mysql.ReplicationStatus{IORunning: "Yes", SQLRunning: "Yes"}), false, true},
		{"a replica whose primary is gone (receiver connecting, in error): ready, stale reads",
			replica(mysql.ReplicationStatus{IORunning: "Connecting", SQLRunning: "Yes", LastIOErrno: 2003, LastIOError: "can't connect"}), false, true},
		{"a replica with replication stopped without error: ready, stale reads",
			replica(mysql.ReplicationStatus{IORunning: "No", SQLRunning: "No"}), false, true},
		{"a broken replica (applier error): not ready",
			replica(mysql.ReplicationStatus{IORunning: "Yes", SQLRunning: "No", LastSQLErrno: 1062, LastSQLError: "Duplicate entry '1' for key 't.PRIMARY'"}), false, false},
		{"a diverged replica: not ready", replica(mysql.ReplicationStatus{IORunning: "No", SQLRunning: "No"}), true, false},
		{"a diverged writable instance: not ready", &mysql.Status{}, true, false},
		{"read-only and not replicating (bootstrapping, waiting for a primary): not ready",
			&mysql.Status{ReadOnly: true, SuperReadOnly: true}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideReadiness(tc.st, tc.diverged)
			if got.Ready != tc.want || got.Reason == "" {
				t.Errorf("DecideReadiness = %+v, want ready %v with a reason", got, tc.want)
			}
			if tc.st != nil && tc.st.Replication != nil {
				r := tc.st.Replication
				for _, text := range []string{r.LastSQLError, r.LastIOError} {
					if text != "" && strings.Contains(got.Reason, text) {
						t.Errorf("the reason %q carries the SQL error text %q", got.Reason, text)
					}
				}
			}
		})
	}
}
