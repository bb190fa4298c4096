package instance

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instancemetrics"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/probes"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/tlsfiles"
)

// metricsTimeouts: a scrape reads memory and three short statements.
var metricsTimeouts = serverTimeouts{ReadHeader: 5 * time.Second, Read: 10 * time.Second,
	Write: 15 * time.Second, Idle: 2 * time.Minute}

// metricsSources are what a scrape reads: the instance manager's own state, nothing it asks
// mysqld for except its counters.
type metricsSources struct {
	poller     *probes.StatusPoller
	state      *LocalState
	isolation  *IsolationDetector
	lease      *PrimaryLease
	fallback   *SemiSyncFallback
	selfFences *atomic.Int64
	server     *tlsfiles.Loader
	client     *tlsfiles.Loader
}

// facts reads one Facts snapshot; mysqld's counters only when its status is fresh.
func (m *manager) metricsFacts(ctx context.Context, src metricsSources) instancemetrics.Facts {
	now := m.deps.Clock.Now()
	role := src.state.RoleFacts()
	f := instancemetrics.Facts{
		Status:     src.poller.Latest().Fresh(now, probes.MaxStaleness),
		RoleKnown:  role.Known,
		Primary:    role.Primary,
		Fenced:     role.Fenced,
		Diverged:   src.state.Diverged(),
		Isolated:   src.isolation.Isolated(),
		SelfFences: src.selfFences.Load(),
		Now:        now,
	}
	f.LeaseHeld, f.LeaseRenewed = src.lease.HeldSince()
	if fb, _ := src.fallback.FallenBack(); fb {
		f.FallenBack = true
	}
	f.Certificates = map[string]time.Time{}
	for name, l := range map[string]*tlsfiles.Loader{"server": src.server, "client": src.client} {
		if l == nil {
			continue
		}
		if cur, err := l.Current(); err == nil && cur.Certificate.Leaf != nil {
			f.Certificates[name] = cur.Certificate.Leaf.NotAfter
		}
	}
	if f.Status != nil {
		if s, err := m.op.ServerMetrics(ctx); err == nil {
			f.Server = s
		} else {
			m.deps.Log.V(1).Info("reading mysqld's counters for a scrape failed", "error", err.Error())
		}
	}
	return f
}

// instanceRegistry registers the instance's collector in the registry the archiver's metrics
// are in, once per process (an in-place update starts a new process). The process's CPU and
// memory are exported too, unless the registry has them already.
var instanceRegistry = sync.OnceValue(func() *instanceCollectorSlot {
	slot := &instanceCollectorSlot{}
	ctrlmetrics.Registry.MustRegister(slot)
	_ = ctrlmetrics.Registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return slot
})

// instanceCollectorSlot is the registered collector; serveMetrics points it at the running
// instance's sources.
type instanceCollectorSlot struct {
	cur atomic.Pointer[instancemetrics.Collector]
}

func (s *instanceCollectorSlot) Describe(chan<- *prometheus.Desc) {}

func (s *instanceCollectorSlot) Collect(ch chan<- prometheus.Metric) {
	if c := s.cur.Load(); c != nil {
		c.Collect(ch)
	}
}

// serveMetrics serves /metrics on cfg.MetricsAddr until ctx ends. A metrics server that cannot
// listen or stops is logged, never the end of the instance manager: scraping is not worth
// taking a database down.
func (m *manager) serveMetrics(ctx context.Context, wg *sync.WaitGroup, src metricsSources) {
	if m.cfg.MetricsAddr == "" {
		return
	}
	log := m.deps.Log.WithName("metrics")
	instanceRegistry().cur.Store(&instancemetrics.Collector{Gather: func(ctx context.Context) instancemetrics.Facts {
		return m.metricsFacts(ctx, src)
	}})
	ln, err := m.sockets.listen("metrics", m.cfg.MetricsAddr)
	if err != nil {
		log.Error(err, "not serving metrics: listening failed", "address", m.cfg.MetricsAddr)
		return
	}
	h := instancemetrics.Handler(ctrlmetrics.Registry, instancemetrics.Auth{TokenFile: m.cfg.MetricsTokenFile},
		func(msg string, kv ...any) { log.V(1).Info(msg, kv...) })
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	srv := newHTTPServer(mux, instancemetrics.ServerTLS(src.server), metricsTimeouts)
	wg.Go(func() {
		if err := m.serveUntil(ctx, srv, ln, "metrics server"); err != nil {
			log.Error(fmt.Errorf("metrics are no longer served: %w", err), "metrics server stopped")
		}
	})
}
