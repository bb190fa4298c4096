package instance

import (
	"net/http"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// Probes serves the kubelet's probes.
type Probes struct {
	Op        mysql.Operator
	Isolation *IsolationDetector // nil: no isolation check
	State     *LocalState        // nil: never diverged
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
		http.Error(w, "neither the API server nor any other instance reachable for too long", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// ready answers DecideReadiness.
func (p *Probes) ready(w http.ResponseWriter, r *http.Request) {
	st, err := p.Op.Status(r.Context())
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
