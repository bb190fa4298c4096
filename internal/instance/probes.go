package instance

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// The probe port is plain HTTP without authentication: anyone who reaches the Pod may call it.
// Its SQL therefore runs through an Operator of its own (never the role reconciler's pool), at
// most MaxProbeQueries at once, each bounded by ProbeQueryTimeout; a probe that finds the slots
// taken fails at once instead of queueing.
const (
	// MaxProbeQueries is how many probe requests may run SQL at the same time.
	MaxProbeQueries = 2
	// ProbeQueryTimeout bounds one probe's SQL, below the kubelet's probe timeout.
	ProbeQueryTimeout = 3 * time.Second
)

// errProbesBusy: every probe slot is taken.
var errProbesBusy = errors.New("probes busy")

// Probes serves the kubelet's probes.
type Probes struct {
	// Op answers the probes' SQL; give it a connection pool of its own.
	Op        mysql.Operator
	Isolation *IsolationDetector // nil: no isolation check
	State     *LocalState        // nil: never diverged
	// QueryTimeout bounds one probe's SQL; 0 means ProbeQueryTimeout.
	QueryTimeout time.Duration

	slotsOnce sync.Once
	slots     chan struct{}
}

// status runs Status in a free probe slot with the query timeout, or fails with errProbesBusy.
func (p *Probes) status(ctx context.Context) (*mysql.Status, error) {
	p.slotsOnce.Do(func() { p.slots = make(chan struct{}, MaxProbeQueries) })
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	default:
		return nil, errProbesBusy
	}
	timeout := p.QueryTimeout
	if timeout <= 0 {
		timeout = ProbeQueryTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return p.Op.Status(ctx)
}

// Handler serves GET /startupz (startup), GET /healthz (liveness) and GET /readyz (readiness).
func (p *Probes) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /startupz", p.started)
	mux.HandleFunc("GET /healthz", p.live)
	mux.HandleFunc("GET /readyz", p.ready)
	return mux
}

// started: mysqld answers, so initialization is over and liveness may start (a clone may still
// run: the isolation count starts only after it).
func (p *Probes) started(w http.ResponseWriter, r *http.Request) {
	if _, err := p.status(r.Context()); err != nil {
		http.Error(w, "mysqld not answering yet", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// live fails only on isolation: a slow or restarting mysqld is the supervisor's business, and
// restarting the container would not help it.
func (p *Probes) live(w http.ResponseWriter, _ *http.Request) {
	if p.Isolation != nil && p.Isolation.Isolated() {
		http.Error(w, "neither the API server nor any other instance reachable for too long", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// ready answers DecideReadiness.
func (p *Probes) ready(w http.ResponseWriter, r *http.Request) {
	st, err := p.status(r.Context())
	if err != nil {
		st = nil
	}
	d := DecideReadiness(st, p.State != nil && p.State.Diverged())
	if !d.Ready {
		http.Error(w, d.Reason, http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte(d.Reason + "\n"))
}
