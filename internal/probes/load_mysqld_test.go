package probes

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	driver "github.com/go-sql-driver/mysql"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// floodClients is how many requests the flood keeps in flight at once.
const floodClients = 256

// loadDuration is how long TestReadinessUnderLoad floods the probe port: 12 s, or
// $CNM_PROBE_LOAD_DURATION (docs/instance-manager.md runs it for 90 s).
func loadDuration(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv("CNM_PROBE_LOAD_DURATION")
	if v == "" {
		return 12 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("CNM_PROBE_LOAD_DURATION: %v", err)
	}
	return d
}

// sqlErrorText matches what the driver's and the server's errors look like: "Error 1045
// (28000): Access denied ...", "dial unix ...: connect: ...", "invalid connection", "context
// deadline exceeded", a SQLSTATE.
var sqlErrorText = regexp.MustCompile(`(?i)error \d|\([0-9A-Z]{5}\)|sqlstate|denied|dial |connect:|invalid connection|deadline|driver|duplicate`)

// probedMysqld is a real mysqld probed the way the instance manager does: the poller on its own
// local-administrator pool over the server's socket, the probe port's server on loopback.
type probedMysqld struct {
	srv    *mysqldtest.Server
	url    string
	poller *StatusPoller
	// sampler is one connection of the test's own, to count the server's connections.
	sampler *sql.DB
}

func startProbedMysqld(t *testing.T) *probedMysqld {
	t.Helper()
	s := mysqldtest.Start(t, mysqldtest.Options{})[0]
	dsn := driver.NewConfig()
	dsn.User, dsn.Net, dsn.Addr = "root", "unix", filepath.Join(s.Dir, "mysqld.sock")
	op, err := mysql.NewFactory().NewLocalAdmin(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Close() })
	poller := &StatusPoller{Op: op, Clock: clock.RealClock{}, Log: testr.New(t)}
	ctx, cancel := context.WithCancel(context.Background())
	polled := make(chan struct{})
	go func() { defer close(polled); poller.Run(ctx) }()
	srv := (&Probes{Mysqld: poller, Clock: clock.RealClock{}}).Server()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); cancel(); <-polled })
	sampler := s.RootDB(t)
	sampler.SetMaxOpenConns(1)
	p := &probedMysqld{srv: s, url: "http://" + ln.Addr().String(), poller: poller, sampler: sampler}
	for begin := time.Now(); poller.Latest().Fresh(time.Now(), poller.MaxAge()) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Since(begin) > 30*time.Second {
			t.Fatalf("the poller never saw mysqld answer: %+v", poller.Latest())
		}
	}
	return p
}

// statusCounter reads one of the server's global status counters (name is a constant).
func (p *probedMysqld) statusCounter(ctx context.Context, name string) (int64, error) {
	var n int64
	var ignored string
	if err := p.sampler.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&ignored, &n); err != nil {
		return 0, fmt.Errorf("reading %s: %w", name, err)
	}
	return n, nil
}

// mustCounter is statusCounter failing the test on an error.
func (p *probedMysqld) mustCounter(t *testing.T, name string) int64 {
	t.Helper()
	n, err := p.statusCounter(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// probeAnswer is one answer of the probe port.
type probeAnswer struct {
	path string
	code int // 0: no answer (err)
	body string
	err  error
	at   time.Time
	took time.Duration
}

// flood keeps floodClients requests in flight against url (readiness mostly, some startup and
// liveness) until ctx ends, over kept-alive connections, and hands every answer to seen.
func flood(ctx context.Context, url string, seen func(probeAnswer)) {
	transport := &http.Transport{MaxIdleConnsPerHost: floodClients}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: probeTimeout}
	paths := []string{"/readyz", "/readyz", "/readyz", "/startupz", "/healthz"}
	var wg sync.WaitGroup
	for i := range floodClients {
		path := paths[i%len(paths)]
		wg.Go(func() {
			for ctx.Err() == nil {
				seen(get(ctx, client, url+path, path))
			}
		})
	}
	wg.Wait()
}

// get asks url once.
func get(ctx context.Context, client *http.Client, url, path string) probeAnswer {
	begin := time.Now()
	a := probeAnswer{path: path}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err == nil {
		var resp *http.Response
		if resp, err = client.Do(req); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			a.code, a.body = resp.StatusCode, string(body)
		}
	}
	a.err, a.at, a.took = err, time.Now(), time.Since(begin)
	return a
}

// TestReadinessUnderLoad: 256 requests kept in flight on the probe port of a healthy primary
// (a real mysqld) do not fail its readiness: every readiness answer, the flood's and those of a
// kubelet-like prober on fresh connections, is 200 "primary" within the probe timeout, no body
// carries SQL error text, and mysqld sees no connection beyond the poller's one.
func TestReadinessUnderLoad(t *testing.T) {
	p := startProbedMysqld(t)
	// Now the sampler's and the poller's connections are open.
	baseThreads, baseConnections := p.mustCounter(t, "Threads_connected"), p.mustCounter(t, "Connections")
	ctx, cancel := context.WithTimeout(t.Context(), loadDuration(t))
	defer cancel()

	var mu sync.Mutex
	var answers, failed int64
	var slowest time.Duration
	var bad []probeAnswer
	record := func(a probeAnswer, kubelet bool) {
		if a.err != nil && ctx.Err() != nil {
			return // cut by the end of the run
		}
		mu.Lock()
		defer mu.Unlock()
		answers++
		slowest = max(slowest, a.took)
		wantBody := map[string]string{"/readyz": "primary\n", "/startupz": "ok\n", "/healthz": "ok\n"}[a.path]
		if a.err != nil || a.code != http.StatusOK || a.body != wantBody || sqlErrorText.MatchString(a.body) ||
			(kubelet && a.took >= probeTimeout) {
			failed++
			if len(bad) < 10 {
				bad = append(bad, a)
			}
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { flood(ctx, p.url, func(a probeAnswer) { record(a, false) }) })
	var kubeletProbes atomic.Int64
	wg.Go(func() {
		// The kubelet opens a connection per probe and gives it timeoutSeconds (5).
		kubelet := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: probeTimeout}
		for tick := time.NewTicker(time.Second); ctx.Err() == nil; <-tick.C {
			record(get(ctx, kubelet, p.url+"/readyz", "/readyz"), true)
			kubeletProbes.Add(1)
		}
	})
	var peakThreads atomic.Int64
	wg.Go(func() {
		for ctx.Err() == nil {
			n, err := p.statusCounter(context.Background(), "Threads_connected")
			if err != nil {
				t.Error(err)
				return
			}
			peakThreads.Store(max(peakThreads.Load(), n))
			time.Sleep(250 * time.Millisecond)
		}
	})
	wg.Wait()
	opened := p.mustCounter(t, "Connections") - baseConnections
	t.Logf("%d answers (%d kubelet probes) in %v with %d in flight; slowest %v; %d failed; mysqld threads connected at most %d (before the flood %d); %d connections opened during the flood",
		answers, kubeletProbes.Load(), loadDuration(t), floodClients, slowest, failed, peakThreads.Load(), baseThreads, opened)
	for _, a := range bad {
		t.Errorf("GET %s = %d %q (%v) after %v, want 200 without SQL error text within %v", a.path, a.code, a.body, a.err, a.took, probeTimeout)
	}
	if failed > 0 {
		t.Errorf("%d of %d answers were not healthy", failed, answers)
	}
	if kubeletProbes.Load() == 0 || answers < floodClients {
		t.Errorf("only %d answers, %d kubelet probes: the flood did not run", answers, kubeletProbes.Load())
	}
	if peakThreads.Load() > baseThreads {
		t.Errorf("mysqld had %d client connections during the flood, want at most the %d before it (the test's and the poller's)",
			peakThreads.Load(), baseThreads)
	}
	if opened > 0 {
		t.Errorf("%d mysqld connections were opened during the flood, want none (the poller keeps its one)", opened)
	}
}

// TestFailureReportedWithinStalenessUnderLoad: under the same flood, a mysqld that stops answering
// for a real reason is reported not ready within the staleness bound, with a fixed body.
func TestFailureReportedWithinStalenessUnderLoad(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(t *testing.T, s *mysqldtest.Server)
	}{
		{"mysqld killed (its socket refuses connections)", func(t *testing.T, s *mysqldtest.Server) {
			if err := s.Kill(); err != nil {
				t.Fatal(err)
			}
		}},
		{"mysqld frozen (SIGSTOP: connections hang)", func(t *testing.T, s *mysqldtest.Server) {
			pid := s.PID()
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProbedMysqld(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var faultAt, firstNotReady atomic.Pointer[time.Time]
			var mu sync.Mutex
			var bad []probeAnswer
			done := make(chan struct{})
			go func() {
				defer close(done)
				flood(ctx, p.url, func(a probeAnswer) {
					if a.path != "/readyz" || a.err != nil {
						return
					}
					fault := faultAt.Load()
					healthy := a.code == http.StatusOK && a.body == "primary\n"
					failing := a.code == http.StatusServiceUnavailable && a.body == "mysqld not answering\n"
					if (fault == nil && !healthy) || (fault != nil && !healthy && !failing) || sqlErrorText.MatchString(a.body) {
						mu.Lock()
						bad = append(bad, a)
						mu.Unlock()
					}
					if fault != nil && failing {
						firstNotReady.CompareAndSwap(nil, &a.at)
					}
				})
			}()
			time.Sleep(3 * time.Second) // the flood at full speed
			now := time.Now()
			tc.fault(t, p.srv)
			faultAt.Store(&now)
			for firstNotReady.Load() == nil && time.Since(now) < 3*MaxStaleness {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			<-done
			for _, a := range bad {
				t.Errorf("GET /readyz = %d %q at %v, want 200 \"primary\" before the fault and 503 \"mysqld not answering\" after",
					a.code, a.body, a.at.Sub(now))
			}
			first := firstNotReady.Load()
			if first == nil {
				t.Fatalf("still ready %v after the fault, want not ready within %v", 3*MaxStaleness, MaxStaleness)
			}
			// Beyond the bound, the slack of a loaded machine: scheduling and the request itself.
			took := first.Sub(now)
			t.Logf("not ready %v after the fault (bound %v)", took, MaxStaleness)
			if took > MaxStaleness+500*time.Millisecond {
				t.Errorf("not ready %v after the fault, want within MaxStaleness (%v)", took, MaxStaleness)
			}
		})
	}
}
