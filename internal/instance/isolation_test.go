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

func TestIsolationDetector(t *testing.T) {
	c := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	d := NewIsolationDetector(c, 30*time.Second)
	for _, step := range []struct {
		name    string
		advance time.Duration
		contact bool
		want    bool
	}{
		{"fresh start", 0, false, false},
		{"30 s without contact is still fine", 30 * time.Second, false, false},
		{"past 30 s the instance is isolated", time.Second, false, true},
		{"a contact ends the isolation", 0, true, false},
		{"and the count starts again", 29 * time.Second, false, false},
	} {
		c.SetTime(c.Now().Add(step.advance))
		if step.contact {
			d.Contact()
		}
		if got := d.Isolated(); got != step.want {
			t.Errorf("%s: Isolated = %v, want %v", step.name, got, step.want)
		}
	}
}

// statusOp answers Status with st or err.
type statusOp struct {
	mysql.Operator
	st  *mysql.Status
	err error
}

func (s statusOp) Status(context.Context) (*mysql.Status, error) { return s.st, s.err }

func TestProbes(t *testing.T) {
	c := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	isolated := NewIsolationDetector(c, time.Second)
	c.SetTime(c.Now().Add(time.Minute))
	healthy := &mysql.ReplicationStatus{IORunning: "Yes", SQLRunning: "Yes"}
	broken := &mysql.ReplicationStatus{IORunning: "Connecting", SQLRunning: "Yes", LastIOErrno: 2003}
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
		{"ready as the primary", &Probes{Op: statusOp{st: &mysql.Status{}}}, "/readyz", 200},
		{"ready as a healthy replica", &Probes{Op: statusOp{st: &mysql.Status{SuperReadOnly: true, ReadOnly: true, Replication: healthy}}}, "/readyz", 200},
		{"not ready with replication broken", &Probes{Op: statusOp{st: &mysql.Status{SuperReadOnly: true, ReadOnly: true, Replication: broken}}}, "/readyz", 503},
		{"not ready read-only without replication", &Probes{Op: statusOp{st: &mysql.Status{SuperReadOnly: true, ReadOnly: true}}}, "/readyz", 503},
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
