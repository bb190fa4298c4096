package instance

import (
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// IsolationDetector tells when the instance has not reached the API server for too long: a
// primary that cannot be coordinated any more must stop, so its liveness probe fails and the
// kubelet restarts it (if the node is isolated too, the restart still happens locally).
type IsolationDetector struct {
	clock clock.PassiveClock
	limit time.Duration
	mu    sync.Mutex
	last  time.Time
}

// NewIsolationDetector starts counting from now.
func NewIsolationDetector(c clock.PassiveClock, limit time.Duration) *IsolationDetector {
	return &IsolationDetector{clock: c, limit: limit, last: c.Now()}
}

// Contact records a successful call to the API server.
func (d *IsolationDetector) Contact() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.last = d.clock.Now()
}

// Isolated reports whether the last contact is older than the limit.
func (d *IsolationDetector) Isolated() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.clock.Since(d.last) > d.limit
}

// Probes serves the kubelet's probes.
type Probes struct {
	Op        mysql.Operator
	Isolation *IsolationDetector // nil: no isolation check
}

// Handler serves GET /startupz (startup), GET /healthz (liveness) and GET /readyz (readiness).
func (p *Probes) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /startupz", p.started)
	mux.HandleFunc("GET /healthz", p.live)
	mux.HandleFunc("GET /readyz", p.ready)
	return mux
}

// started: mysqld answers, so bootstrap (initialization, clone) is over and liveness may start.
func (p *Probes) started(w http.ResponseWriter, r *http.Request) {
	if _, err := p.Op.Status(r.Context()); err != nil {
		http.Error(w, "mysqld not answering yet", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// live fails only on isolation: a slow or restarting mysqld is the supervisor's business, and
// restarting the container would not help it.
func (p *Probes) live(w http.ResponseWriter, _ *http.Request) {
	if p.Isolation != nil && p.Isolation.Isolated() {
		http.Error(w, "API server unreachable for too long", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// ready: mysqld answers, and it is either the writable primary or a healthy replica.
func (p *Probes) ready(w http.ResponseWriter, r *http.Request) {
	st, err := p.Op.Status(r.Context())
	switch {
	case err != nil:
		http.Error(w, "mysqld not answering", http.StatusServiceUnavailable)
	case st.Writable():
		_, _ = w.Write([]byte("primary\n"))
	case st.Replication != nil && st.Replication.Healthy():
		_, _ = w.Write([]byte("replica\n"))
	default:
		http.Error(w, "read-only and not replicating", http.StatusServiceUnavailable)
	}
}
