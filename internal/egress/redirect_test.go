package egress_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/egress"
)

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// TestRedirectToARefusedAddress runs real HTTP servers: an allowed one on 127.0.0.1, allowed
// through Guard.Allow for exactly 127.0.0.1/32, and a forbidden one on 127.0.0.2 (loopback too,
// outside the allowance; Linux routes all of 127.0.0.0/8 to lo). The client is net/http's, which
// follows redirects (minio-go does not, but a guard on the dialer must not depend on that):
//   - the allowed server answers, so the allowance works and the test's client is sound;
//   - the forbidden server, asked directly, is refused and sees no connection;
//   - the allowed server redirecting to the forbidden one, to the metadata service and to a name
//     resolving to 127.0.0.2 is refused at the new connection each redirect needs; the forbidden
//     server sees no connection.
func TestRedirectToARefusedAddress(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2 (Linux routes 127.0.0.0/8 to lo): %v", err)
	}
	forbidden := &countingListener{Listener: raw}
	fsrv := &httptest.Server{Listener: forbidden, Config: &http.Server{Handler: http.HandlerFunc(
		func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("forbidden server reached")) })}}
	fsrv.Start()
	defer fsrv.Close()
	fport := raw.Addr().(*net.TCPAddr).Port

	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	redirect := func(path, to string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) })
	}
	redirect("/to-forbidden", fsrv.URL+"/")
	redirect("/to-metadata", "http://169.254.169.254/latest/meta-data/")
	redirect("/to-mapped", "http://[::ffff:127.0.0.2]:"+strconv.Itoa(fport)+"/")
	redirect("/to-name", "http://forbidden.rebind.test.:"+strconv.Itoa(fport)+"/")
	allowed := httptest.NewServer(mux)
	defer allowed.Close()

	g := egress.Guard{What: "object store endpoint", Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Hint: "allow with --object-store-allowed-cidrs"}
	dialer := &net.Dialer{Control: g.Control, Resolver: resolverTo(netip.MustParseAddr("127.0.0.2"))}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil}}

	resp, err := client.Get(allowed.URL + "/ok")
	if err != nil {
		t.Fatalf("the allowed server: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the allowed server answered %s", resp.Status)
	}
	for _, tc := range []struct {
		rule, url string
		want      egress.Rule
	}{
		{"loopback, asked directly", fsrv.URL + "/", egress.Loopback},
		{"loopback, after a redirect", allowed.URL + "/to-forbidden", egress.Loopback},
		{"loopback, IPv4-mapped, after a redirect", allowed.URL + "/to-mapped", egress.Loopback},
		{"loopback, a name resolving to it, after a redirect", allowed.URL + "/to-name", egress.Loopback},
		{"link-local, the metadata service, after a redirect", allowed.URL + "/to-metadata", egress.LinkLocalUnicast},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			resp, err := client.Get(tc.url)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("GET %s: %s, want a refusal", tc.url, resp.Status)
			}
			var refused *egress.RefusedError
			if !errors.As(err, &refused) || refused.Rule != tc.want {
				t.Fatalf("GET %s: %v, want a refusal by %q", tc.url, err, tc.want)
			}
			t.Logf("GET %s: %v", tc.url, err)
		})
	}
	if n := forbidden.accepted.Load(); n != 0 {
		t.Errorf("the forbidden server accepted %d connections, want none", n)
	}
}
