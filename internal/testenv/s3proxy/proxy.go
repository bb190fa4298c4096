package s3proxy

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Proxy is a running fault-injecting proxy. Its exported fields do not change.
type Proxy struct {
	URL  string // http://127.0.0.1:PORT, or https:// for a TLS proxy
	Host string // 127.0.0.1:PORT

	server    *httptest.Server
	rp        *httputil.ReverseProxy
	transport *http.Transport

	mu       sync.Mutex
	seq      int
	requests []Request
	counts   map[Kind]int
	faults   []*fault
	fired    int
}

// New starts a plain HTTP proxy to upstream (http://host:port). Close stops it.
func New(upstream string) (*Proxy, error) { return newProxy(upstream, false) }

// NewTLS starts an HTTPS proxy to upstream, with a self-signed certificate for 127.0.0.1 that
// CACertPEM returns.
func NewTLS(upstream string) (*Proxy, error) { return newProxy(upstream, true) }

// Start starts a plain HTTP proxy and registers its Close with t.Cleanup.
func Start(t testing.TB, upstream string) *Proxy {
	t.Helper()
	return startT(t, upstream, false)
}

// StartTLS starts an HTTPS proxy and registers its Close with t.Cleanup.
func StartTLS(t testing.TB, upstream string) *Proxy {
	t.Helper()
	return startT(t, upstream, true)
}

func startT(t testing.TB, upstream string, tls bool) *Proxy {
	t.Helper()
	p, err := newProxy(upstream, tls)
	if err != nil {
		t.Fatalf("s3proxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

func newProxy(upstream string, tls bool) (*Proxy, error) {
	target, err := url.Parse(upstream)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, fmt.Errorf("upstream %q: want http(s)://host:port", upstream)
	}
	p := &Proxy{
		counts:    map[Kind]int{},
		transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second},
	}
	quiet := log.New(io.Discard, "", 0)
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host // SigV4 signed the Host the client used
		},
		Transport: p.transport,
		ErrorLog:  quiet,
	}
	p.server = httptest.NewUnstartedServer(p)
	p.server.Config.ErrorLog = quiet
	if tls {
		p.server.StartTLS()
	} else {
		p.server.Start()
	}
	p.URL = p.server.URL
	p.Host = strings.TrimPrefix(strings.TrimPrefix(p.URL, "http://"), "https://")
	return p, nil
}

// CACertPEM returns the certificate of a TLS proxy in PEM, to trust it; nil for a plain one.
func (p *Proxy) CACertPEM() []byte {
	cert := p.server.Certificate()
	if cert == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

// Close stops the proxy, waiting for requests in flight.
func (p *Proxy) Close() {
	p.server.CloseClientConnections()
	p.server.Close()
	p.transport.CloseIdleConnections()
}

// Inject adds a fault.
func (p *Proxy) Inject(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, &fault{Fault: f})
}

// FailNth applies a to the n-th request only.
func (p *Proxy) FailNth(n int, a Action) { p.Inject(Fault{Match: Nth(n), Action: a, Times: 1}) }

// ClearFaults removes every fault; counts are kept.
func (p *Proxy) ClearFaults() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = nil
}

// Reset removes every fault and forgets every request: the next one is number 1.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults, p.requests, p.counts, p.seq, p.fired = nil, nil, map[Kind]int{}, 0, 0
}

// Requests returns the requests seen since the start or the last Reset, in arrival order.
func (p *Proxy) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

// Counts returns the number of requests of each kind.
func (p *Proxy) Counts() map[Kind]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.counts)
}

// Count returns the number of requests of one kind.
func (p *Proxy) Count(k Kind) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[k]
}

// Total returns the number of requests.
func (p *Proxy) Total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seq
}

// Fired returns how many requests a fault was applied to.
func (p *Proxy) Fired() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fired
}

// record numbers and classifies a request and returns the action of the first applicable fault.
func (p *Proxy) record(r *http.Request) (Request, Action, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	req := Request{Seq: p.seq, Kind: Classify(r), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
	p.requests = append(p.requests, req)
	p.counts[req.Kind]++
	for _, f := range p.faults {
		if f.applies(req) {
			f.hits++
			p.fired++
			return req, f.Action, true
		}
	}
	return req, Action{}, false
}
