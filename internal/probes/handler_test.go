package probes

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// flag is an Isolation and a Divergence fixed at one answer.
type flag bool

func (f flag) Isolated() bool { return bool(f) }
func (f flag) Diverged() bool { return bool(f) }

func TestProbes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	healthy := &mysql.ReplicationStatus{IORunning: "Yes", SQLRunning: "Yes"}
	replica := &mysql.Status{SuperReadOnly: true, ReadOnly: true, Replication: healthy}
	broken := &mysql.Status{SuperReadOnly: true, ReadOnly: true, Replication: &mysql.ReplicationStatus{
		IORunning: "Yes", SQLRunning: "No", LastSQLErrno: 1062, LastSQLError: "Duplicate entry '7' for key 't.PRIMARY'"}}
	answered := func(st *mysql.Status, age time.Duration) *Observation {
		return &Observation{Status: st, At: now.Add(-age)}
	}
	down := &Observation{Err: errors.New("dial unix /run/mysqld.sock: connect: no such file or directory"), At: now}
	for _, tc := range []struct {
		name      string
		latest    *Observation // nil: no query has ended yet
		isolation Isolation
		diverged  Divergence
		path      string
		wantCode  int
		wantBody  string
	}{
		{"started once mysqld answers", answered(&mysql.Status{}, 0), nil, nil, "/startupz", 200, "ok\n"},
		{"not started before the first answer", nil, nil, nil, "/startupz", 503, "mysqld not answering yet\n"},
		{"not started while mysqld does not answer", down, nil, nil, "/startupz", 503, "mysqld not answering yet\n"},
		{"live without an isolation check, whatever mysqld does", down, nil, nil, "/healthz", 200, "ok\n"},
		{"live fails when isolated", answered(&mysql.Status{}, 0), flag(true), nil, "/healthz", 503,
			"neither the API server nor any other instance reachable for too long\n"},
		{"live while not isolated (bootstrapping, however long)", down, flag(false), nil, "/healthz", 200, "ok\n"},
		{"ready as the primary", answered(&mysql.Status{}, 0), nil, nil, "/readyz", 200, "primary\n"},
		{"ready as a healthy replica", answered(replica, 0), nil, nil, "/readyz", 200, "replica\n"},
		{"not ready when diverged", answered(replica, 0), nil, flag(true), "/readyz", 503,
			"diverged: holds transactions its primary never had\n"},
		{"not ready when mysqld does not answer, without the driver's error text", down, nil, nil, "/readyz", 503, "mysqld not answering\n"},
		{"not ready before the first answer", nil, nil, nil, "/readyz", 503, "mysqld not answering\n"},
		{"a broken replica is not ready, without the applier's error text", answered(broken, 0), nil, nil, "/readyz", 503,
			"replica broken: the applier stopped on an error (see the instance status)\n"},
		{"ready on an answer as old as the staleness bound", answered(&mysql.Status{}, MaxStaleness), nil, nil, "/readyz", 200, "primary\n"},
		{"not ready on an answer older than the staleness bound (the status query hangs)",
			answered(&mysql.Status{}, MaxStaleness+time.Millisecond), nil, nil, "/readyz", 503, "mysqld not answering\n"},
		{"not started on an answer older than the staleness bound",
			answered(&mysql.Status{}, MaxStaleness+time.Millisecond), nil, nil, "/startupz", 503, "mysqld not answering yet\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			poller := &StatusPoller{}
			if tc.latest != nil {
				poller.latest.Store(tc.latest)
			}
			p := &Probes{Mysqld: poller, Isolation: tc.isolation, State: tc.diverged, Clock: clocktesting.NewFakePassiveClock(now)}
			rec := httptest.NewRecorder()
			p.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if rec.Code != tc.wantCode || rec.Body.String() != tc.wantBody {
				t.Errorf("GET %s = %d %q, want %d %q", tc.path, rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
		})
	}
}

// TestServerHasTimeouts: the probe server is built with every timeout set, so a client that
// keeps a connection open is cut off.
func TestServerHasTimeouts(t *testing.T) {
	srv := (&Probes{}).Server()
	for name, got := range map[string]time.Duration{"ReadHeaderTimeout": srv.ReadHeaderTimeout,
		"ReadTimeout": srv.ReadTimeout, "WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout} {
		if got <= 0 {
			t.Errorf("the probe server's %s is %v: a client can hold a connection for ever", name, got)
		}
	}
}
