package instance

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// Session sweep timing (SessionSweep).
const (
	// SweepInterval is how often a sweep ends the client sessions: a client that reaches the
	// demoted server through a write Service keeps its session at most that long.
	SweepInterval = 100 * time.Millisecond
	// SweepSettle is how long a sweep goes on once no EndpointSlice of a write Service lists the
	// Pod: kube-proxy applies an EndpointSlice change within about a second (its iptables
	// minSyncPeriod), and a connection it still sends here meanwhile is ended too.
	SweepSettle = 2 * time.Second
	// SweepMax bounds a sweep whose routing cannot be read (the API server unreachable): past
	// it the sweep stops, so that a replica's read sessions are not ended for ever.
	SweepMax = 60 * time.Second
)

// SessionSweep ends the client sessions of a server that stopped being the primary (demoted in
// a switchover, fenced, self-fenced) for as long as a write Service may still send it new ones:
// its Pod keeps role=primary until the new primary records itself, the EndpointSlices follow the
// label, and kube-proxy follows them. A pooled client whose session was ended reconnects at once,
// through the write Service, to this read-only server; a session left open there would fail
// every write (read-only) without ever being dropped, pinning the pool to the old primary. The
// sweep ends such sessions every SweepInterval, until the Pod has been out of every write
// Service's EndpointSlices for SweepSettle (or SweepMax passed), or the server is writable again
// (a switchover aborted: the old primary resumes). The dump threads of the replicas and the
// instance manager's own sessions are kept (mysql.ClientSession). While it runs the instance
// reports EndingSessions, and the operator keeps it out of every Service: a read session sent
// to it through -ro would be ended too. Safe for concurrent use.
type SessionSweep struct {
	Op mysql.Operator
	// Routed says whether an EndpointSlice of a write Service lists this instance's Pod.
	Routed func(ctx context.Context) (bool, error)
	Clock  clock.Clock
	Log    logr.Logger

	mu      sync.Mutex
	trigger chan struct{}
	active  bool
}

// Active says whether a sweep is under way (false for a nil SessionSweep).
func (s *SessionSweep) Active() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

func (s *SessionSweep) setActive(on bool) {
	s.mu.Lock()
	s.active = on
	s.mu.Unlock()
}

// Trigger starts a sweep, or restarts the one under way: the server has just stopped taking
// writes and its client sessions were ended once.
func (s *SessionSweep) Trigger() {
	if s == nil {
		return
	}
	// Reported at once, before the sweep's goroutine runs: the operator keeps the instance out
	// of every Service meanwhile.
	s.setActive(true)
	select {
	case s.triggers() <- struct{}{}:
	default:
	}
}

func (s *SessionSweep) triggers() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trigger == nil {
		s.trigger = make(chan struct{}, 1)
	}
	return s.trigger
}

// Run sweeps each time Trigger is called, until ctx ends.
func (s *SessionSweep) Run(ctx context.Context) {
	trigger := s.triggers()
	for {
		select {
		case <-ctx.Done():
			return
		case <-trigger:
		}
		s.sweep(ctx, trigger)
	}
}

// sweep ends the client sessions every SweepInterval until SweepDone says so. A new Trigger
// starts it over.
func (s *SessionSweep) sweep(ctx context.Context, trigger chan struct{}) {
	s.setActive(true)
	defer s.setActive(false)
	start := s.Clock.Now()
	var state SweepState
	ended := 0
	for {
		st, err := s.Op.Status(ctx)
		writable := err == nil && st.Writable()
		if err == nil && !writable {
			n, kerr := s.Op.KillClientSessions(ctx)
			ended += n
			if kerr != nil && ctx.Err() == nil {
				s.Log.Info("ending the client sessions of the demoted server failed", "error", kerr.Error())
			}
		}
		routed, rerr := false, err
		if !writable && rerr == nil {
			routed, rerr = s.Routed(ctx)
		}
		var done bool
		var why string
		state, done, why = SweepDone(state, SweepObservation{Now: s.Clock.Now(), Start: start, Writable: writable,
			Routed: routed, Unknown: rerr != nil})
		if done {
			s.Log.Info("stopped ending client sessions", "reason", why, "ended", ended, "after", s.Clock.Since(start).String())
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-trigger:
			start, state = s.Clock.Now(), SweepState{}
		case <-s.Clock.After(SweepInterval):
		}
	}
}

// SweepObservation is what one round of a sweep saw.
type SweepObservation struct {
	Now, Start time.Time
	// Writable: the server takes writes again.
	Writable bool
	// Routed: an EndpointSlice of a write Service lists the Pod. Unknown: that could not be read
	// (nor the server's state).
	Routed, Unknown bool
}

// SweepState is what a sweep carries from one round to the next: since when the Pod is out of
// every write Service (zero while it is in one or that is unknown).
type SweepState struct{ OutSince time.Time }

// SweepDone decides whether a sweep stops after this round, and why.
func SweepDone(s SweepState, o SweepObservation) (SweepState, bool, string) {
	switch {
	case o.Writable:
		return s, true, "the server takes writes again"
	case o.Unknown || o.Routed:
		s.OutSince = time.Time{}
		if o.Now.Sub(o.Start) >= SweepMax {
			return s, true, "still routed, or its routing unknown, after " + SweepMax.String()
		}
		return s, false, ""
	case s.OutSince.IsZero():
		s.OutSince = o.Now
	}
	if o.Now.Sub(s.OutSince) >= SweepSettle {
		return s, true, "out of every write Service for " + SweepSettle.String()
	}
	return s, false, ""
}
