package tlsfiles_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/secretmount"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/tlsfiles"
)

// reloadInterval is short so that tests see renewals quickly.
const reloadInterval = 100 * time.Millisecond

func newCA(t *testing.T) *certs.KeyPair {
	t.Helper()
	ca, err := certs.NewCA("test-ca", time.Now())
	check.Must(t, err)
	return ca
}

// issue signs a server (for 127.0.0.1) or client leaf with ca, valid for validity.
func issue(t *testing.T, ca *certs.KeyPair, cn string, client bool, validity time.Duration) *certs.KeyPair {
	t.Helper()
	req := certs.Request{CommonName: cn, Client: client, Validity: validity}
	if !client {
		req.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	kp, err := certs.Issue(ca, req, time.Now())
	check.Must(t, err)
	return kp
}

// mount writes leaf and the trusted CAs into dir as the kubelet does.
func mount(t *testing.T, dir string, leaf *certs.KeyPair, trusted ...*certs.KeyPair) {
	t.Helper()
	var bundle []byte
	for _, ca := range trusted {
		bundle = append(bundle, ca.CertPEM...)
	}
	check.Must(t, secretmount.Write(dir, map[string][]byte{"ca.crt": bundle, "tls.crt": leaf.CertPEM, "tls.key": leaf.KeyPEM}))
}

func loader(t *testing.T, dir string) *tlsfiles.Loader {
	t.Helper()
	l, err := tlsfiles.NewLoader(tlsfiles.In(dir), reloadInterval, nil)
	check.Must(t, err)
	return l
}

// serve runs an HTTPS server with tlsfiles.ServerConfig(l) on a loopback port; GET /status
// answers with the serial number of the client certificate in the Instance field.
func serve(t *testing.T, l *tlsfiles.Loader) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check.Must(t, err)
	srv := &http.Server{TLSConfig: tlsfiles.ServerConfig(l), ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewEncoder(w).Encode(instanceclient.Status{Instance: r.TLS.PeerCertificates[0].SerialNumber.Text(16)})
		})}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// call asks addr for GET /status with a client following l and returns the client certificate
// serial the server saw.
func call(t *testing.T, l *tlsfiles.Loader, addr string) (string, error) {
	c := instanceclient.NewFollowing(func() (*tls.Config, error) { return tlsfiles.ClientConfig(l) }, 2*time.Second)
	st, err := c.Status(t.Context(), instanceclient.Target{Instance: "test", Address: addr, ServerName: "127.0.0.1"})
	if err != nil {
		return "", err
	}
	return st.Instance, nil
}

// presented is the serial of the certificate the server at addr presents to a client of l.
func presented(t *testing.T, l *tlsfiles.Loader, addr string) (string, error) {
	cfg, err := tlsfiles.ClientConfig(l)
	check.Must(t, err)
	cfg.ServerName = "127.0.0.1"
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Text(16), nil
}

func serial(kp *certs.KeyPair) string { return kp.Cert.SerialNumber.Text(16) }

// TestRenewedCertificatesAreServedWithoutRestart: a server and a client whose short-lived
// certificates are renewed underneath them (the kubelet's symlink swap) present the new ones,
// and every call made during the change and after the old ones expired succeeds.
func TestRenewedCertificatesAreServedWithoutRestart(t *testing.T) {
	dir := t.TempDir()
	serverDir, clientDir := filepath.Join(dir, "server"), filepath.Join(dir, "client")
	ca := newCA(t)
	const shortLived = 4 * time.Second
	oldServer, oldClient := issue(t, ca, "db-1", false, shortLived), issue(t, ca, "replication", true, shortLived)
	expiry := oldServer.Cert.NotAfter
	mount(t, serverDir, oldServer, ca)
	mount(t, clientDir, oldClient, ca)
	sl, cl := loader(t, serverDir), loader(t, clientDir)
	addr := serve(t, sl)
	seen, err := call(t, cl, addr)
	check.Must(t, err)
	if seen != serial(oldClient) {
		t.Fatalf("the server saw client certificate %s, want %s", seen, serial(oldClient))
	}

	// Calls go on all the time; none may fail.
	var calls, failures atomic.Int32
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			calls.Add(1)
			if _, err := call(t, cl, addr); err != nil {
				failures.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
		}
	})

	newServer, newClient := issue(t, ca, "db-1", false, time.Hour), issue(t, ca, "replication", true, time.Hour)
	mount(t, serverDir, newServer, ca)
	mount(t, clientDir, newClient, ca)
	check.Eventually(t, 10*time.Second, "the renewed certificates are presented", func(context.Context) (bool, error) {
		got, err := presented(t, cl, addr)
		if err != nil || got != serial(newServer) {
			return false, errors.New("the server does not present the renewed certificate yet: " + got)
		}
		if got, err := call(t, cl, addr); err != nil || got != serial(newClient) {
			return false, errors.New("the client does not present the renewed certificate yet: " + got)
		}
		return true, nil
	})
	// Past the old certificates' expiry, calls still succeed.
	time.Sleep(time.Until(expiry) + time.Second)
	seen, err = call(t, cl, addr)
	check.Must(t, err)
	if seen != serial(newClient) {
		t.Errorf("after the old certificates expired the server saw %s, want %s", seen, serial(newClient))
	}
	close(stop)
	wg.Wait()
	if n := failures.Load(); n > 0 || calls.Load() < 10 {
		t.Errorf("%d of %d calls failed during the renewal: %v", n, calls.Load(), firstErr.Load())
	}

	// What a process that read the files once would present is refused now.
	stale, err := tlsfiles.Parse(ca.CertPEM, oldClient.CertPEM, oldClient.KeyPEM, [32]byte{})
	check.Must(t, err)
	cfg := &tls.Config{RootCAs: stale.Roots, Certificates: []tls.Certificate{stale.Certificate}, ServerName: "127.0.0.1"}
	c := instanceclient.New(cfg, 2*time.Second)
	if _, err := c.Status(t.Context(), instanceclient.Target{Instance: "test", Address: addr, ServerName: "127.0.0.1"}); err == nil {
		t.Error("the expired client certificate is still accepted: the test did not outlive the old certificates")
	}
}

// TestCARoll: while a CA is rolled, a server and a client, one holding a leaf of the old CA and
// one of the new, trust each other through the bundle of both CAs; once every leaf is renewed
// and the old CA dropped, an old leaf is refused.
func TestCARoll(t *testing.T) {
	dir := t.TempDir()
	serverDir, oldClientDir, newClientDir := filepath.Join(dir, "server"), filepath.Join(dir, "old"), filepath.Join(dir, "new")
	oldCA, newCA := newCA(t), newCA(t)
	oldServer, newServer := issue(t, oldCA, "db-1", false, time.Hour), issue(t, newCA, "db-1", false, time.Hour)
	oldClient, newClient := issue(t, oldCA, "replication", true, time.Hour), issue(t, newCA, "replication", true, time.Hour)

	// Before: everything under the old CA.
	mount(t, serverDir, oldServer, oldCA)
	mount(t, oldClientDir, oldClient, oldCA, newCA)
	mount(t, newClientDir, newClient, newCA, oldCA)
	sl := loader(t, serverDir)
	oldC, newC := loader(t, oldClientDir), loader(t, newClientDir)
	addr := serve(t, sl)
	if _, err := call(t, newC, addr); err == nil {
		t.Fatal("a leaf of the new CA is accepted by a server trusting only the old one")
	}
	steps := []struct {
		name          string
		leaf          *certs.KeyPair
		trust         []*certs.KeyPair
		oldOK, newOK  bool
		wantPresented *certs.KeyPair
	}{
		{"both CAs trusted, the old leaf still served", oldServer, []*certs.KeyPair{newCA, oldCA}, true, true, oldServer},
		{"both CAs trusted, the new leaf served", newServer, []*certs.KeyPair{newCA, oldCA}, true, true, newServer},
		{"the old CA dropped", newServer, []*certs.KeyPair{newCA}, false, true, newServer},
	}
	for _, s := range steps {
		mount(t, serverDir, s.leaf, s.trust...)
		check.Eventually(t, 10*time.Second, s.name, func(context.Context) (bool, error) {
			if got, err := presented(t, newC, addr); err != nil || got != serial(s.wantPresented) {
				return false, errors.New("the server does not present the expected leaf yet")
			}
			_, oldErr := call(t, oldC, addr)
			_, newErr := call(t, newC, addr)
			if (oldErr == nil) != s.oldOK || (newErr == nil) != s.newOK {
				return false, errors.New("old leaf " + errText(oldErr) + ", new leaf " + errText(newErr))
			}
			return true, nil
		})
	}
}

func errText(err error) string {
	if err == nil {
		return "accepted"
	}
	return "refused (" + err.Error() + ")"
}

// TestHalfWrittenFilesKeepThePreviousMaterial: a certificate whose key does not match (files
// caught mid-change) is not used; the previous material stays until the files load again.
func TestHalfWrittenFilesKeepThePreviousMaterial(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t)
	a, b := issue(t, ca, "a", true, time.Hour), issue(t, ca, "b", true, time.Hour)
	mount(t, dir, a, ca)
	l := loader(t, dir)
	check.Must(t, secretmount.Write(dir, map[string][]byte{"ca.crt": ca.CertPEM, "tls.crt": b.CertPEM, "tls.key": a.KeyPEM}))
	time.Sleep(2 * reloadInterval)
	m, err := l.Current()
	check.Must(t, err)
	if !bytes.Equal(m.Certificate.Leaf.Raw, a.Cert.Raw) || l.LastError() == nil {
		t.Errorf("mismatched files replaced the material (last error %v)", l.LastError())
	}
	mount(t, dir, b, ca)
	time.Sleep(2 * reloadInterval)
	m, err = l.Current()
	check.Must(t, err)
	if !bytes.Equal(m.Certificate.Leaf.Raw, b.Cert.Raw) || l.LastError() != nil {
		t.Errorf("the renewed files were not loaded (last error %v)", l.LastError())
	}
}
