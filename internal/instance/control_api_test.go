package instance

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// fakeOp answers Status with a canned value and records the semi-sync writes; other methods
// panic.
type fakeOp struct {
	mysql.Operator
	status  mysql.Status
	applied []mysql.SemiSyncSettings
	counts  []int
}

func (f *fakeOp) Status(context.Context) (*mysql.Status, error) {
	st := f.status
	return &st, nil
}

func (f *fakeOp) ApplySemiSync(_ context.Context, s mysql.SemiSyncSettings) error {
	f.applied = append(f.applied, s)
	return nil
}

func (f *fakeOp) SetSemiSyncWaitForReplicaCount(_ context.Context, n int) error {
	f.counts = append(f.counts, n)
	return nil
}

// controlAPIFixture serves api over mTLS with a fresh CA and returns clients presenting the
// operator's certificate, an instance's certificate, and one from a foreign CA.
type controlAPIFixture struct {
	target                   instanceclient.Target
	operator, peer, stranger *instanceclient.Client
}

func serveControlAPI(t *testing.T, api *ControlAPI) controlAPIFixture {
	t.Helper()
	now := time.Now()
	ca, err := certs.NewCA("test CA", now)
	must(t, err)
	foreign, err := certs.NewCA("foreign CA", now)
	must(t, err)
	server, err := certs.Issue(ca, certs.Request{CommonName: "c-1", DNSNames: []string{"c-1.ns.svc"}}, now)
	must(t, err)
	serverTLS, err := ServerTLSConfig(ca.CertPEM, server.CertPEM, server.KeyPEM)
	must(t, err)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", serverTLS)
	must(t, err)
	srv := &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	client := func(issuer *certs.KeyPair, cn string) *instanceclient.Client {
		kp, err := certs.Issue(issuer, certs.Request{CommonName: cn, Client: true}, now)
		must(t, err)
		cfg, err := instanceclient.TLSConfig(ca.CertPEM, kp.CertPEM, kp.KeyPEM)
		must(t, err)
		return instanceclient.New(cfg, 5*time.Second)
	}
	return controlAPIFixture{
		target:   instanceclient.Target{Instance: "c-1", Address: ln.Addr().String(), ServerName: "c-1.ns.svc"},
		operator: client(ca, certs.OperatorCommonName), peer: client(ca, "c-2"), stranger: client(foreign, certs.OperatorCommonName),
	}
}

// must is check.Must, the one way a test stops on an error it does not expect.
func must(t *testing.T, err error) {
	t.Helper()
	check.Must(t, err)
}

func TestControlAPIAuthorization(t *testing.T) {
	op := &fakeOp{status: mysql.Status{GTIDExecuted: gtid.MustParse(uP + ":1-5")}}
	f := serveControlAPI(t, &ControlAPI{Instance: "c-1", Op: op, AllowedClients: []string{certs.OperatorCommonName}})
	if _, err := f.operator.Status(t.Context(), f.target); err != nil {
		t.Errorf("the operator's certificate: %v", err)
	}
	var httpErr *instanceclient.HTTPError
	if _, err := f.peer.Status(t.Context(), f.target); !errors.As(err, &httpErr) || httpErr.StatusCode != http.StatusForbidden {
		t.Errorf("another instance's certificate: %v, want 403", err)
	}
	if _, err := f.stranger.Status(t.Context(), f.target); !errors.Is(err, instanceclient.ErrUnreachable) {
		t.Errorf("a certificate from another CA: %v, want a failed handshake", err)
	}
	plain := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if resp, err := plain.Get("https://" + f.target.Address + instanceclient.StatusPath); err == nil {
		resp.Body.Close()
		t.Error("a client without a certificate was answered")
	}
}

// TestControlAPIReportsLocalState: the source's instance name, the Lease and the bootstrap.
func TestControlAPIReportsLocalState(t *testing.T) {
	op := &fakeOp{status: mysql.Status{ReadOnly: true, SuperReadOnly: true,
		Replication: &mysql.ReplicationStatus{SourceHost: "10.0.0.1", SourcePort: 3306, IORunning: "Yes", SQLRunning: "Yes"}}}
	state := &LocalState{}
	held := false
	f := serveControlAPI(t, &ControlAPI{Instance: "c-1", Op: op, AllowedClients: []string{certs.OperatorCommonName},
		SourceInstance: func(host string, port int) string {
			if host == "10.0.0.1" && port == 3306 {
				return "c-2"
			}
			return ""
		},
		State: state, LeaseHeld: func() bool { return held }})
	st, err := f.operator.Status(t.Context(), f.target)
	if err != nil || !st.Bootstrapping || st.BootstrapDone() || st.LeaseHeld || st.Replication.SourceInstance != "c-2" {
		t.Fatalf("while bootstrapping: %+v (%+v), %v", st, st.Replication, err)
	}
	state.SetBootstrapDone()
	held = true
	if st, err = f.operator.Status(t.Context(), f.target); err != nil || !st.BootstrapDone() || !st.LeaseHeld {
		t.Errorf("bootstrapped, Lease held: %+v, %v", st, err)
	}
	var old instanceclient.Status // a report of an instance manager that predates the fields
	if err := json.Unmarshal([]byte(`{"instance":"c-1","role":"replica","readOnly":true,"gtidExecuted":""}`), &old); err != nil || !old.BootstrapDone() || old.LeaseHeld {
		t.Errorf("an older report reads as %+v, %v; want bootstrapped, no Lease", old, err)
	}
}

// TestControlAPIStatusClients: another instance's certificate may read GET /status, never change
// the semi-sync count.
func TestControlAPIStatusClients(t *testing.T) {
	op := &fakeOp{status: mysql.Status{SemiSync: mysql.SemiSyncStatus{SourceEnabled: true, Timeout: time.Second}}}
	f := serveControlAPI(t, &ControlAPI{Instance: "c-1", Op: op, AllowedClients: []string{certs.OperatorCommonName},
		StatusClients: []string{"c-2"}})
	if _, err := f.peer.Status(t.Context(), f.target); err != nil {
		t.Errorf("a status client reading /status: %v", err)
	}
	var httpErr *instanceclient.HTTPError
	err := f.peer.SetSemiSync(t.Context(), f.target, instanceclient.SemiSyncRequest{WaitForReplicaCount: 1})
	if !errors.As(err, &httpErr) || httpErr.StatusCode != http.StatusForbidden || len(op.applied) != 0 {
		t.Errorf("a status client posting /semisync: %v, applied %+v; want 403", err, op.applied)
	}
}

func TestControlAPISemiSync(t *testing.T) {
	lag := int64(3)
	for _, tc := range []struct {
		name   string
		status mysql.Status
		count  int32
		code   int // 0: success
	}{
		{"the primary applies a new count", mysql.Status{SemiSync: mysql.SemiSyncStatus{SourceEnabled: true, Timeout: time.Second, WaitForReplicaCount: 2}}, 1, 0},
		{"a replica refuses", mysql.Status{ReadOnly: true, SuperReadOnly: true, SemiSync: mysql.SemiSyncStatus{SourceEnabled: true},
			Replication: &mysql.ReplicationStatus{SecondsBehindSource: &lag}}, 1, http.StatusConflict},
		{"a primary without semi-sync refuses", mysql.Status{}, 1, http.StatusConflict},
		{"a count below one is refused", mysql.Status{SemiSync: mysql.SemiSyncStatus{SourceEnabled: true, Timeout: time.Second}}, 0, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := &fakeOp{status: tc.status}
			f := serveControlAPI(t, &ControlAPI{Instance: "c-1", Op: op, AllowedClients: []string{certs.OperatorCommonName}})
			err := f.operator.SetSemiSync(t.Context(), f.target, instanceclient.SemiSyncRequest{WaitForReplicaCount: tc.count})
			var httpErr *instanceclient.HTTPError
			switch {
			case tc.code == 0 && err != nil:
				t.Fatalf("SetSemiSync: %v", err)
			case tc.code == 0:
				// The count alone: the switches and the timeout are the role pass's.
				if len(op.counts) != 1 || op.counts[0] != int(tc.count) || len(op.applied) != 0 {
					t.Errorf("counts set %v, settings applied %+v; want the count %d alone", op.counts, op.applied, tc.count)
				}
			case !errors.As(err, &httpErr) || httpErr.StatusCode != tc.code:
				t.Errorf("SetSemiSync: %v, want status %d", err, tc.code)
			case len(op.applied) != 0 || len(op.counts) != 0:
				t.Errorf("applied %+v, counts %v on a refused request", op.applied, op.counts)
			}
		})
	}
}

func TestStatusReport(t *testing.T) {
	lag := int64(7)
	st := &mysql.Status{
		ReadOnly: true, SuperReadOnly: true, GTIDExecuted: gtid.MustParse(uP + ":1-5"),
		Replication: &mysql.ReplicationStatus{SourceHost: "10.0.0.1", SourcePort: 3306, IORunning: "Connecting",
			SQLRunning: "Yes", LastIOErrno: 2003, LastIOError: "error connecting", SecondsBehindSource: &lag,
			RetrievedGTIDSet: gtid.MustParse(uP + ":3-6")},
		SemiSync: mysql.SemiSyncStatus{ReplicaEnabled: true},
	}
	got := StatusReport("c-2", st)
	if got.Role != "replica" || !got.ReadOnly || got.GTIDExecuted != uP+":1-5" || got.SemiSync != nil {
		t.Errorf("report = %+v", got)
	}
	r := got.Replication
	if r == nil || r.Source != "10.0.0.1:3306" || r.IORunning || !r.SQLRunning || r.LastError != "error connecting" || r.LagSeconds != 7 {
		t.Errorf("replication = %+v", r)
	}
	if !got.SuperReadOnly || r.IOState != "Connecting" || r.LastIOErrno != 2003 || r.LastIOError != "error connecting" ||
		r.LastSQLErrno != 0 || r.GTIDRetrieved != uP+":3-6" || got.SemiSyncReplica == nil || !got.SemiSyncReplica.Enabled || got.SemiSyncReplica.Active {
		t.Errorf("report = %+v, replication %+v, semi-sync replica %+v", got, r, got.SemiSyncReplica)
	}
	st.Replication.LastSQLErrno, st.Replication.LastSQLError = 1062, "duplicate entry"
	if r := StatusReport("c-2", st).Replication; r.LastError != "duplicate entry" || r.LastSQLErrno != 1062 || r.LastIOError != "error connecting" {
		t.Errorf("the applier's error is the last error: %+v", r)
	}
	st.Replication.LastSQLErrno, st.Replication.LastSQLError = 0, ""
	st.Replication.SecondsBehindSource = nil
	if got := StatusReport("c-2", st); got.Replication.LagSeconds != -1 {
		t.Errorf("unknown lag = %d, want -1", got.Replication.LagSeconds)
	}
	primary := &mysql.Status{SemiSync: mysql.SemiSyncStatus{SourceEnabled: true, SourceActive: false, WaitForReplicaCount: 2, Clients: 1}}
	if got := StatusReport("c-1", primary); got.Role != "primary" || got.ReadOnly || got.SuperReadOnly || got.SemiSync == nil || got.SemiSyncReplica != nil ||
		got.SemiSync.Active || got.SemiSync.WaitForReplicaCount != 2 || got.SemiSync.Clients != 1 {
		t.Errorf("primary report = %+v, semi-sync %+v", got, got.SemiSync)
	}
}

// testControlAPI serves the control API of the real primary and a real replica.
func testControlAPI(t *testing.T, m map[string]*member, primary, replica string) {
	allowed := []string{certs.OperatorCommonName}
	p := serveControlAPI(t, &ControlAPI{Instance: primary, Op: m[primary].op, AllowedClients: allowed})
	st, err := p.operator.Status(t.Context(), p.target)
	if err != nil {
		t.Fatal(err)
	}
	if st.Role != "primary" || st.ReadOnly || st.SemiSync == nil || !st.SemiSync.Active || st.SemiSync.Clients != 2 {
		t.Fatalf("primary status %+v, semi-sync %+v", st, st.SemiSync)
	}
	if err := p.operator.SetSemiSync(t.Context(), p.target, instanceclient.SemiSyncRequest{WaitForReplicaCount: 1}); err != nil {
		t.Fatal(err)
	}
	if st, err = p.operator.Status(t.Context(), p.target); err != nil || st.SemiSync.WaitForReplicaCount != 1 {
		t.Fatalf("after POST /semisync: %+v, %v", st.SemiSync, err)
	}
	r := serveControlAPI(t, &ControlAPI{Instance: replica, Op: m[replica].op, AllowedClients: allowed})
	rst, err := r.operator.Status(t.Context(), r.target)
	if err != nil {
		t.Fatal(err)
	}
	want := m[primary].srv.Addr()
	if rst.Role != "replica" || !rst.ReadOnly || rst.Replication == nil || rst.Replication.Source != want ||
		!rst.Replication.IORunning || !rst.Replication.SQLRunning || rst.Replication.LagSeconds < 0 {
		t.Errorf("replica status %+v, replication %+v", rst, rst.Replication)
	}
	if gtid.Compare(gtid.MustParse(rst.GTIDExecuted), gtid.MustParse(st.GTIDExecuted)) == gtid.Diverged {
		t.Errorf("replica %s diverged from primary %s", rst.GTIDExecuted, st.GTIDExecuted)
	}
	var httpErr *instanceclient.HTTPError
	err = r.operator.SetSemiSync(t.Context(), r.target, instanceclient.SemiSyncRequest{WaitForReplicaCount: 1})
	if !errors.As(err, &httpErr) || httpErr.StatusCode != http.StatusConflict {
		t.Errorf("POST /semisync on a replica: %v, want 409", err)
	}
}
