package probes

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// slowServer answers Status after delay, or only when the context ends while hung is set,
// counting the queries running at once.
type slowServer struct {
	delay         time.Duration
	hung          atomic.Bool
	running, peak atomic.Int32
}

func (s *slowServer) Status(ctx context.Context) (*mysql.Status, error) {
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	if s.hung.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	select {
	case <-time.After(s.delay):
		return &mysql.Status{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// probeTimeout is the kubelet's timeout for one probe (specs: timeoutSeconds 5).
const probeTimeout = 5 * time.Second

// runPoller starts p until the test ends.
func runPoller(t *testing.T, p *StatusPoller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestAFloodOfProbesRunsOneQueryAtATime: 256 clients asking without pause while mysqld hangs
// for longer than the test never run more than the poller's one query, and each is answered from
// memory within the kubelet's probe timeout instead of waiting for SQL.
func TestAFloodOfProbesRunsOneQueryAtATime(t *testing.T) {
	op := &slowServer{}
	op.hung.Store(true)
	poller := &StatusPoller{Op: op, Clock: clock.RealClock{}, Log: testr.New(t), Interval: 100 * time.Millisecond, Timeout: time.Minute}
	runPoller(t, poller)
	srv := httptest.NewServer((&Probes{Mysqld: poller, Clock: clock.RealClock{}}).Handler())
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: probeTimeout}
	var answers, wrong atomic.Int64
	var slowest atomic.Int64
	deadline := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	for i := range 256 {
		path := []string{"/readyz", "/startupz"}[i%2]
		wg.Go(func() {
			for time.Now().Before(deadline) {
				begin := time.Now()
				resp, err := client.Get(srv.URL + path)
				if err != nil {
					wrong.Add(1)
					continue
				}
				resp.Body.Close()
				took := time.Since(begin)
				for s := slowest.Load(); int64(took) > s && !slowest.CompareAndSwap(s, int64(took)); s = slowest.Load() {
				}
				answers.Add(1)
				if resp.StatusCode != http.StatusServiceUnavailable {
					wrong.Add(1)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d answers, slowest %v, %d queries at once at most", answers.Load(), time.Duration(slowest.Load()), op.peak.Load())
	if wrong.Load() != 0 {
		t.Errorf("%d requests failed or were not answered 503 while mysqld hangs", wrong.Load())
	}
	if p := op.peak.Load(); p != 1 {
		t.Errorf("%d status queries ran at once, want exactly the poller's one", p)
	}
	if s := time.Duration(slowest.Load()); s >= probeTimeout {
		t.Errorf("the slowest probe took %v: it waited for the hung query instead of answering from memory", s)
	}
}

// TestStalenessBound: a mysqld that answers within the query timeout is never reported stale,
// and one whose status query hangs is reported not answering within MaxAge.
func TestStalenessBound(t *testing.T) {
	const interval, timeout = 200 * time.Millisecond, 400 * time.Millisecond
	op := &slowServer{delay: timeout / 4}
	poller := &StatusPoller{Op: op, Clock: clock.RealClock{}, Log: testr.New(t), Interval: interval, Timeout: timeout}
	if got, want := poller.MaxAge(), 2*timeout; got != want {
		t.Fatalf("MaxAge = %v, want max(interval, timeout) + timeout = %v", got, want)
	}
	runPoller(t, poller)
	fresh := func() bool { return poller.Latest().Fresh(time.Now(), poller.MaxAge()) != nil }
	for !fresh() {
		time.Sleep(5 * time.Millisecond)
	}
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if !fresh() {
			t.Fatalf("a server answering in %v was reported stale (newest observation from %v ago)", op.delay, time.Since(poller.Latest().At))
		}
	}
	op.hung.Store(true)
	hung := time.Now()
	for fresh() {
		time.Sleep(5 * time.Millisecond)
	}
	if took, bound := time.Since(hung), poller.MaxAge()+300*time.Millisecond; took > bound {
		t.Errorf("a hung status query was reported %v after the hang, want within MaxAge (%v) plus scheduling", took, poller.MaxAge())
	}
	if p := op.peak.Load(); p != 1 {
		t.Errorf("%d status queries ran at once, want 1", p)
	}
}
