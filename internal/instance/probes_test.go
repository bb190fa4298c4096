package instance

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// statusOp answers Status with st or err.
type statusOp struct {
	mysql.Operator
	st  *mysql.Status
	err error
}

func (s statusOp) Status(context.Context) (*mysql.Status, error) { return s.st, s.err }

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
			replica(mysql.ReplicationStatus{IORunning: "Yes", SQLRunning: "No", LastSQLErrno: 1062, LastSQLError: "duplicate"}), false, false},
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
		})
	}
}

func TestProbes(t *testing.T) {
	c := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	isolated := NewIsolationDetector(c, time.Second)
	isolated.Arm()
	c.SetTime(c.Now().Add(time.Minute))
	bootstrapping := NewIsolationDetector(c, time.Second)
	diverged := &LocalState{}
	diverged.SetDiverged(true)
	healthy := &mysql.ReplicationStatus{IORunning: "Yes", SQLRunning: "Yes"}
	for _, tc := range []struct {
		name     string
		probes   *Probes
		path     string
		wantCode int
	}{
		{"started once mysqld answers", &Probes{Op: statusOp{st: &mysql.Status{}}}, "/startupz", 200},
		{"not started while mysqld does not answer", &Probes{Op: statusOp{err: errors.New("down")}}, "/startupz", 503},
		{"live without an isolation check", &Probes{Op: statusOp{err: errors.New("down")}}, "/healthz", 200},
		{"live fails when isolated", &Probes{Op: statusOp{}, Isolation: isolated}, "/healthz", 503},
		{"live while bootstrapping, however long", &Probes{Op: statusOp{}, Isolation: bootstrapping}, "/healthz", 200},
		{"ready as the primary", &Probes{Op: statusOp{st: &mysql.Status{}}}, "/readyz", 200},
		{"ready as a healthy replica", &Probes{Op: statusOp{st: &mysql.Status{SuperReadOnly: true, ReadOnly: true, Replication: healthy}}}, "/readyz", 200},
		{"not ready when diverged", &Probes{Op: statusOp{st: &mysql.Status{SuperReadOnly: true, ReadOnly: true, Replication: healthy}}, State: diverged}, "/readyz", 503},
		{"not ready when mysqld does not answer", &Probes{Op: statusOp{err: errors.New("down")}}, "/readyz", 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tc.probes.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if rec.Code != tc.wantCode {
				t.Errorf("GET %s = %d %q, want %d", tc.path, rec.Code, rec.Body.String(), tc.wantCode)
			}
		})
	}
}
