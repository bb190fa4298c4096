package instance

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"

	"github.com/go-logr/logr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// ControlAPI serves the operator: GET /status, POST /semisync (the primary's acknowledgement
// count), POST /semisync/replica (whether a replica acknowledges), the role changes and PUT
// /manager/update (an in-place update of the instance manager), over mutual TLS.
type ControlAPI struct {
	Instance string
	Op       mysql.Operator
	// AllowedClients are the certificate common names allowed to call; the CA alone is not
	// enough, since instances' own client certificates come from the same CA.
	AllowedClients []string
	// StatusClients may call GET /status only: the other instances, which read the primary's
	// GTID set and writability with their client certificate before following or promoting.
	StatusClients []string
	// SourceInstance names the instance a replication source address belongs to (nil: none).
	SourceInstance func(host string, port int) string
	// State is the instance's bootstrap state (nil: bootstrapped).
	State *LocalState
	// LeaseHeld reports whether this instance holds the primary Lease (nil: never).
	LeaseHeld func() bool
	// Fallback is the primary's semi-sync fallback (nil: none): the report says when the source
	// side is off because it fell back.
	Fallback *SemiSyncFallback
	// Participation records what the operator told this replica about acknowledging (nil: POST
	// /semisync/replica is refused).
	Participation *SemiSyncParticipation
	// Sweep, if set, goes on ending the client sessions of a demoted server while a write
	// Service may still route to it (SessionSweep).
	Sweep *SessionSweep
	// Parameters reports what became of spec.mysql.parameters (nil: nothing reported).
	Parameters *ParameterApplier
	// ManagerUpdate reports the instance manager's binary and takes a new one in place (nil:
	// neither).
	ManagerUpdate *ManagerUpdate
	// ReleaseLease gives the primary Lease up after a demotion (nil: no Lease); not used when
	// Demote is set.
	ReleaseLease func(context.Context) error
	// Demote, if set, runs a demotion's stop under the primary Lease's gate and releases the
	// Lease (PrimaryLease.Demote).
	Demote func(ctx context.Context, stop func(context.Context) error) error
	Log    logr.Logger
}

// ServerTLSConfig requires a client certificate signed by the cluster CA and presents the
// instance's server certificate.
func ServerTLSConfig(caPEM, certPEM, keyPEM []byte) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in the cluster CA data")
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading the instance server certificate: %w", err)
	}
	return &tls.Config{
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
		Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
	}, nil
}

// Handler returns the API's routes, each checking the client certificate's common name.
func (c *ControlAPI) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+instanceclient.StatusPath, c.status)
	mux.HandleFunc("POST "+instanceclient.SemiSyncPath, c.semiSync)
	mux.HandleFunc("POST "+instanceclient.SemiSyncReplicaPath, c.semiSyncReplica)
	mux.HandleFunc("POST "+instanceclient.DemotePath, c.demote)
	mux.HandleFunc("POST "+instanceclient.StopReplicaIOPath, c.stopReplicaIO)
	if c.ManagerUpdate != nil {
		mux.HandleFunc("PUT "+instanceclient.ManagerUpdatePath, c.ManagerUpdate.serve)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.allowed(r) {
			http.Error(w, "client certificate not allowed", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// allowed checks the client certificate's common name against the route's callers.
func (c *ControlAPI) allowed(r *http.Request) bool {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return false
	}
	cn := r.TLS.PeerCertificates[0].Subject.CommonName
	if slices.Contains(c.AllowedClients, cn) {
		return true
	}
	return r.Method == http.MethodGet && r.URL.Path == instanceclient.StatusPath && slices.Contains(c.StatusClients, cn)
}

// localStatus reads the local server's status for a request; when it cannot, it logs why and
// answers 503 without the error text, and ok is false.
func (c *ControlAPI) localStatus(w http.ResponseWriter, r *http.Request) (st *mysql.Status, ok bool) {
	st, err := c.Op.Status(r.Context())
	if err != nil {
		c.Log.Error(err, "reading the local status")
		http.Error(w, "mysqld status unavailable", http.StatusServiceUnavailable)
		return nil, false
	}
	return st, true
}

func (c *ControlAPI) status(w http.ResponseWriter, r *http.Request) {
	st, ok := c.localStatus(w, r)
	if !ok {
		return
	}
	report := StatusReport(c.Instance, st)
	if fellBack, _ := c.Fallback.FallenBack(); fellBack {
		ReportFallenBack(&report, st)
	}
	if r := report.Replication; r != nil && c.SourceInstance != nil {
		r.SourceInstance = c.SourceInstance(st.Replication.SourceHost, st.Replication.SourcePort)
	}
	report.Bootstrapping = c.State != nil && !c.State.BootstrapDone()
	report.LeaseHeld = c.LeaseHeld != nil && c.LeaseHeld()
	report.EndingSessions = c.Sweep.Active()
	report.Parameters = c.Parameters.Report()
	report.Manager = c.ManagerUpdate.Identity()
	writeJSON(w, report)
}

// StatusReport converts the local status to the control API's form.
func StatusReport(instance string, st *mysql.Status) instanceclient.Status {
	out := instanceclient.Status{
		Instance: instance, Role: "replica", ReadOnly: st.SuperReadOnly || st.ReadOnly,
		SuperReadOnly: st.SuperReadOnly, GTIDExecuted: st.GTIDExecuted.String(), GTIDInFlight: st.GTIDInFlight.String(),
		AckWaiters: int32(st.SemiSync.AckWaiters), LongestAckWaitMillis: st.SemiSync.LongestAckWait.Milliseconds(),
	}
	if st.Writable() {
		out.Role = "primary"
	}
	if r := st.Replication; r != nil {
		rep := &instanceclient.ReplicationStatus{
			Source:    net.JoinHostPort(r.SourceHost, strconv.Itoa(r.SourcePort)),
			IORunning: r.IORunning == "Yes", SQLRunning: r.SQLRunning == "Yes", IOState: r.IORunning, LagSeconds: -1,
			LastError: r.LastIOError, LastIOErrno: r.LastIOErrno, LastIOError: r.LastIOError,
			LastSQLErrno: r.LastSQLErrno, LastSQLError: r.LastSQLError, GTIDRetrieved: r.RetrievedGTIDSet.String(),
		}
		if r.LastSQLError != "" {
			rep.LastError = r.LastSQLError
		}
		if r.SecondsBehindSource != nil {
			rep.LagSeconds = *r.SecondsBehindSource
		}
		out.Replication = rep
	}
	if s := st.SemiSync; s.ReplicaEnabled {
		out.SemiSyncReplica = &instanceclient.SemiSyncReplicaStatus{Enabled: true, Active: s.ReplicaActive}
	}
	if s := st.SemiSync; s.SourceEnabled {
		out.SemiSync = &instanceclient.SemiSyncStatus{
			Active: s.SourceActive, WaitForReplicaCount: int32(s.WaitForReplicaCount), Clients: int32(s.Clients),
		}
	}
	return out
}

// ReportFallenBack marks report as that of a primary whose instance manager fell back to
// asynchronous replication: the source side is off, but not because the spec disables it.
func ReportFallenBack(report *instanceclient.Status, st *mysql.Status) {
	s := st.SemiSync
	if s.SourceEnabled {
		return // turned on again since the fallback was read
	}
	report.SemiSync = &instanceclient.SemiSyncStatus{Active: false, FallenBack: true,
		WaitForReplicaCount: int32(s.WaitForReplicaCount), Clients: int32(s.Clients)}
}

// semiSync applies a new acknowledgement count on the primary, leaving the other settings alone.
func (c *ControlAPI) semiSync(w http.ResponseWriter, r *http.Request) {
	var req instanceclient.SemiSyncRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil || req.WaitForReplicaCount < 1 {
		http.Error(w, "want a JSON body with waitForReplicaCount >= 1", http.StatusBadRequest)
		return
	}
	st, ok := c.localStatus(w, r)
	if !ok {
		return
	}
	if !st.Writable() || !st.SemiSync.SourceEnabled {
		http.Error(w, "not a primary with semi-sync enabled", http.StatusConflict)
		return
	}
	// The count alone: the switches and the timeout are the role pass's (ConvergeSemiSync), and
	// writing back what this request read would undo a change that pass made meanwhile.
	if err := c.Op.SetSemiSyncWaitForReplicaCount(r.Context(), int(req.WaitForReplicaCount)); err != nil {
		c.Log.Error(err, "applying the semi-sync count", "waitForReplicaCount", req.WaitForReplicaCount)
		http.Error(w, "applying the semi-sync count failed", http.StatusInternalServerError)
		return
	}
	c.Log.Info("applied the semi-sync count", "waitForReplicaCount", req.WaitForReplicaCount)
	writeJSON(w, struct{}{})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
