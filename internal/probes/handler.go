package probes

import (
	"net/http"
	"time"

	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// Isolation tells whether the instance has been cut off from everything for too long.
type Isolation interface{ Isolated() bool }

// Divergence tells whether the instance holds transactions its primary never had.
type Divergence interface{ Diverged() bool }

// Probes serves the kubelet's probes from the poller's newest observation: a request reads memory
// only, so a flood of requests neither reaches mysqld nor makes the kubelet's request wait.
type Probes struct {
	Mysqld    *StatusPoller
	Isolation Isolation  // nil: no isolation check
	State     Divergence // nil: never diverged
	Clock     clock.PassiveClock
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
func (p *Probes) started(w http.ResponseWriter, _ *http.Request) {
	if p.mysqldStatus() == nil {
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

// ready answers DecideReadiness on the newest fresh observation.
func (p *Probes) ready(w http.ResponseWriter, _ *http.Request) {
	d := DecideReadiness(p.mysqldStatus(), p.State != nil && p.State.Diverged())
	if !d.Ready {
		http.Error(w, d.Reason, http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte(d.Reason + "\n"))
}

// mysqldStatus is the status of the newest observation if mysqld answered it within the poller's
// staleness bound, else nil.
func (p *Probes) mysqldStatus() *mysql.Status {
	return p.Mysqld.Latest().Fresh(p.Clock.Now(), p.Mysqld.MaxAge())
}

// Server returns the probe port's plain-HTTP server of p. Its timeouts cut off a client that
// sends slowly or keeps an idle connection (the kubelet gives a probe 5 seconds); a request never
// waits for another, so a flood of them delays the kubelet's by the time to answer from memory.
func (p *Probes) Server() *http.Server {
	return &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second}
}
