package objectstore_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/egress"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// guard is the operator's guard (internal/operator), allowing allow.
func guard(allow ...string) objectstore.Control {
	g := egress.Guard{What: "object store endpoint", Hint: "allow with --object-store-allowed-cidrs"}
	for _, a := range allow {
		g.Allow = append(g.Allow, netip.MustParsePrefix(a))
	}
	return g.Control
}

func guardedClient(t *testing.T, cfg objectstore.Config, control objectstore.Control) *objectstore.Client {
	t.Helper()
	cfg.MaxRetries = 1
	c, err := objectstore.NewGuarded(cfg, control)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGuardedClient runs a guarded client against a real S3 server on 127.0.0.1: allowed for
// exactly its address it uploads and lists; without the allowance every request is refused
// before it connects, with an error naming the address and the rule, and nothing is written; an
// endpoint at the metadata service's address is refused the same way.
func TestGuardedClient(t *testing.T) {
	s := s3test.Start(t)
	cfg := storeConfig(t, s, s.Endpoint, testPrefix)

	allowed := guardedClient(t, cfg, guard("127.0.0.1/32"))
	if _, err := allowed.UploadBackup(t.Context(), request(ref("b1", "id1"), newProducer(5, 1000))); err != nil {
		t.Fatalf("upload through the allowance: %v", err)
	}
	if list, err := allowed.ListBackups(t.Context(), testCluster); err != nil || len(list) != 1 {
		t.Fatalf("list through the allowance: %v, %v", list, err)
	}

	refused := guardedClient(t, cfg, guard())
	_, err := refused.UploadBackup(t.Context(), request(ref("b2", "id2"), newProducer(6, 1000)))
	wantRefused(t, "upload", err, "object store endpoint "+s.Addr+" refused: loopback address")
	_, err = refused.ListBackups(t.Context(), testCluster)
	wantRefused(t, "list", err, "object store endpoint "+s.Addr+" refused: loopback address")
	if _, err := allowed.ReadMetadata(t.Context(), ref("b2", "id2")); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("the refused upload wrote something: %v", err)
	}

	metadata := cfg
	metadata.Endpoint = "169.254.169.254:80"
	_, _, err = guardedClient(t, metadata, guard("127.0.0.1/32")).ReadIndex(t.Context(), testCluster)
	wantRefused(t, "read index", err, "object store endpoint 169.254.169.254:80 refused: link-local address")
}

func wantRefused(t *testing.T, op string, err error, msg string) {
	t.Helper()
	if !errors.Is(err, egress.ErrRefused) || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: %v, want a refusal reading %q", op, err, msg)
	}
}

// TestGuardedClientAndRedirects: minio-go does not follow redirects: an allowed server (127.0.0.1,
// allowed exactly) redirecting every request to a refused one (127.0.0.2) makes the request fail
// with the redirect answer as its error, and the refused server sees no connection. internal/egress's TestRedirectToARefusedAddress
// shows that a client that does follow redirects is refused at the redirect's connection.
func TestGuardedClientAndRedirects(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2 (Linux routes 127.0.0.0/8 to lo): %v", err)
	}
	var accepted atomic.Int32
	forbidden := &httptest.Server{Listener: countAccepts{raw, &accepted},
		Config: &http.Server{Handler: http.NotFoundHandler()}}
	forbidden.Start()
	defer forbidden.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, forbidden.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()

	s := &s3test.Server{Bucket: "backups", Region: "us-east-1", AccessKey: "AKIAEXAMPLE000000000", SecretKey: "secret"}
	cfg := storeConfig(t, s, redirector.URL, testPrefix)
	c := guardedClient(t, cfg, guard("127.0.0.1/32"))
	// The error is the redirect answer itself: minio-go did not follow it.
	if _, err := c.ListBackups(t.Context(), testCluster); err == nil || !strings.Contains(err.Error(), "Temporary Redirect") {
		t.Errorf("a list answered by a redirect: %v, want the redirect as the error", err)
	}
	if _, _, err := c.ReadIndex(t.Context(), testCluster); err == nil || !strings.Contains(err.Error(), "Temporary Redirect") {
		t.Errorf("reading the index answered by a redirect: %v, want the redirect as the error", err)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the refused server accepted %d connections", n)
	}
}

type countAccepts struct {
	net.Listener
	n *atomic.Int32
}

func (l countAccepts) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}
