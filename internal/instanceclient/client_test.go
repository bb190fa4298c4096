package instanceclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
)

var now = time.Now() // certificates only; the client itself reads no clock

type pki struct {
	ca, server, client *certs.KeyPair
}

func newPKI(t *testing.T) pki {
	t.Helper()
	ca, err := certs.NewCA("db-ca", now)
	if err != nil {
		t.Fatal(err)
	}
	server, err := certs.Issue(ca, certs.Request{CommonName: "db-1", DNSNames: []string{"db-1.ns.svc"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	client, err := certs.Issue(ca, certs.Request{CommonName: certs.OperatorCommonName, Client: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	return pki{ca, server, client}
}

// startInstance serves handler over TLS requiring a client certificate signed by p.ca, like the
// instance manager's control API.
func startInstance(t *testing.T, p pki, handler http.Handler) Target {
	t.Helper()
	srv := httptest.NewUnstartedServer(handler)
	cert, err := tls.X509KeyPair(p.server.CertPEM, p.server.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.ca.Cert)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return Target{Instance: "db-1", Address: srv.Listener.Addr().String(), ServerName: "db-1.ns.svc"}
}

func clientWith(t *testing.T, ca, client *certs.KeyPair, timeout time.Duration) *Client {
	t.Helper()
	cfg, err := TLSConfig(ca.CertPEM, client.CertPEM, client.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return New(cfg, timeout)
}

func statusHandler(t *testing.T) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		if cn := r.TLS.PeerCertificates[0].Subject.CommonName; cn != certs.OperatorCommonName {
			t.Errorf("the server sees client %q", cn)
		}
		_ = json.NewEncoder(w).Encode(Status{Instance: "db-1", Role: "primary", GTIDExecuted: "uuid:1-5",
			SemiSync: &SemiSyncStatus{Active: true, WaitForReplicaCount: 1, Clients: 2}})
	})
	mux.HandleFunc("POST /semisync", func(w http.ResponseWriter, r *http.Request) {
		var req SemiSyncRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.WaitForReplicaCount != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
		}
	})
	return mux
}

func TestStatusOverMutualTLS(t *testing.T) {
	p := newPKI(t)
	target := startInstance(t, p, statusHandler(t))
	st, err := clientWith(t, p.ca, p.client, time.Second).Status(context.Background(), target)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if st.Instance != "db-1" || st.Role != "primary" || st.GTIDExecuted != "uuid:1-5" || !st.SemiSync.Active {
		t.Errorf("the report is decoded: %+v", st)
	}
}

func TestSetSemiSync(t *testing.T) {
	p := newPKI(t)
	target := startInstance(t, p, statusHandler(t))
	c := clientWith(t, p.ca, p.client, time.Second)
	if err := c.SetSemiSync(context.Background(), target, SemiSyncRequest{WaitForReplicaCount: 2}); err != nil {
		t.Errorf("POST /semisync: %v", err)
	}
	var httpErr *HTTPError
	err := c.SetSemiSync(context.Background(), target, SemiSyncRequest{WaitForReplicaCount: 7})
	if !errors.As(err, &httpErr) || httpErr.StatusCode != http.StatusBadRequest || httpErr.Instance != "db-1" {
		t.Errorf("a refusal is an HTTPError naming the instance: %v", err)
	}
}

func TestRejectedCertificates(t *testing.T) {
	p := newPKI(t)
	other := newPKI(t)
	target := startInstance(t, p, statusHandler(t))
	for _, tc := range []struct {
		rule   string
		client *Client
		target Target
	}{
		{"a client certificate from another CA is refused by the instance",
			clientWith(t, p.ca, other.client, time.Second), target},
		{"an instance whose certificate another CA signed is not trusted",
			clientWith(t, other.ca, other.client, time.Second), target},
		{"an instance whose certificate lacks the expected name is not trusted",
			clientWith(t, p.ca, p.client, time.Second), Target{Instance: "db-1", Address: target.Address, ServerName: "db-2.ns.svc"}},
	} {
		if _, err := tc.client.Status(context.Background(), tc.target); !errors.Is(err, ErrUnreachable) {
			t.Errorf("%s: got %v", tc.rule, err)
		}
	}
}

func TestSilentInstanceTimesOut(t *testing.T) {
	p := newPKI(t)
	// A listener that accepts and never speaks: the TLS handshake cannot complete.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { conn.Close() })
		}
	}()
	start := time.Now()
	_, err = clientWith(t, p.ca, p.client, 300*time.Millisecond).Status(context.Background(),
		Target{Instance: "db-3", Address: l.Addr().String(), ServerName: "db-3.ns.svc"})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "db-3") {
		t.Errorf("a silent instance yields ErrUnreachable naming it: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("the timeout bounds the wait: took %s", elapsed)
	}
}

func TestTLSConfigRejectsBadMaterial(t *testing.T) {
	p := newPKI(t)
	if _, err := TLSConfig([]byte("junk"), p.client.CertPEM, p.client.KeyPEM); err == nil {
		t.Error("a CA that is not PEM is refused")
	}
	if _, err := TLSConfig(p.ca.CertPEM, p.client.CertPEM, p.server.KeyPEM); err == nil {
		t.Error("a key that does not match the certificate is refused")
	}
}
