package instance

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/tlsfiles"
)

// TestServersCutOffSlowClients: a client that sends its headers but never its body, or keeps a
// connection idle, is disconnected after the server's timeouts instead of holding it for ever.
func TestServersCutOffSlowClients(t *testing.T) {
	short := serverTimeouts{ReadHeader: 300 * time.Millisecond, Read: 500 * time.Millisecond,
		Write: time.Second, Idle: 500 * time.Millisecond}
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte("ok"))
	}), nil, short)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	for _, tc := range []struct{ name, send string }{
		{"headers never finished", "POST / HTTP/1.1\r\nHost: x\r\n"},
		{"a body that never comes", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"},
		{"an idle keep-alive connection", "GET / HTTP/1.1\r\nHost: x\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", ln.Addr().String())
			must(t, err)
			defer conn.Close()
			_, err = conn.Write([]byte(tc.send))
			must(t, err)
			must(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
			begin := time.Now()
			_, err = io.Copy(io.Discard, conn) // returns when the server closes the connection
			if err != nil {
				t.Fatalf("the server kept the connection open for %v: %v", time.Since(begin).Round(time.Millisecond), err)
			}
		})
	}
}

// TestControlAPIServerHasTimeouts: the control API's server is built with every timeout set.
func TestControlAPIServerHasTimeouts(t *testing.T) {
	dir := t.TempDir()
	m := &manager{cfg: &RunConfig{Instance: "db-1", ServerTLSDir: filepath.Join(dir, "tls"), ManagerAddr: "127.0.0.1:0"},
		op: statusOp{}, deps: RunDeps{Log: testr.New(t)}}
	writeTestTLS(t, m.cfg.ServerTLSDir, filepath.Join(dir, "client"))
	files, err := tlsfiles.NewLoader(tlsfiles.Files(m.cfg.serverTLS()), 0, nil)
	must(t, err)
	srv, ln, err := m.controlAPI(files, "db-replication", &LocalState{}, nil, nil, nil, nil, nil)
	must(t, err)
	defer ln.Close()
	for name, got := range map[string]time.Duration{"ReadHeaderTimeout": srv.ReadHeaderTimeout,
		"ReadTimeout": srv.ReadTimeout, "WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout} {
		if got <= 0 {
			t.Errorf("the control API's %s is %v: a client can hold a connection for ever", name, got)
		}
	}
	if srv.ReadTimeout != controlAPITimeouts.Read || srv.IdleTimeout != controlAPITimeouts.Idle {
		t.Errorf("the control API's timeouts are %v/%v, want controlAPITimeouts", srv.ReadTimeout, srv.IdleTimeout)
	}
}
