package instance

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
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
	// SweepRoutingEvery is how often a sweep reads the write Services' EndpointSlices (two
	// requests): the API client is shared with the Lease renewals.
	SweepRoutingEvery = 500 * time.Millisecond
)

// SweepKeptUsers are the operator's accounts whose sessions a sweep keeps: replicas connecting
// (before their dump thread starts), clones and backups from this server, the operator's fence.
var SweepKeptUsers = []string{specs.UserReplication, specs.UserBackup, specs.UserFence}

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
	// round is held for each round of a sweep; stopped, set under it by Stop, ends the sweep.
	round   sync.Mutex
	stopped bool
}

// Stop ends the sweep under way, if any, and returns once no round of it runs: called before
// the server is made writable (a promotion), so that no session of the writable server is ended.
// A later Trigger starts a new sweep.
func (s *SessionSweep) Stop() {
	if s == nil {
		return
	}
	s.round.Lock()
	s.stopped = true
	s.round.Unlock()
	s.mu.Lock()
	select {
	case <-s.trigger:
	default:
	}
	s.active = false
	s.mu.Unlock()
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

// finished clears active unless a Trigger is pending (its sweep starts next).
func (s *SessionSweep) finished() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.trigger) == 0 {
		s.active = false
	}
}

// Trigger starts a sweep, or restarts the one under way: the server has just stopped taking
// writes and its client sessions were ended once.
func (s *SessionSweep) Trigger() {
	if s == nil {
		return
	}
	// Reported at once, before the sweep's goroutine runs: the operator keeps the instance out
	// of every Service meanwhile.
	trigger := s.triggers()
	s.round.Lock()
	s.stopped = false
	s.round.Unlock()
	s.mu.Lock()
	s.active = true
	select {
	case trigger <- struct{}{}:
	default:
	}
	s.mu.Unlock()
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

// sweep ends the client sessions every SweepInterval, and reads the routing every
// SweepRoutingEvery, until SweepDone says so or Stop is called. A new Trigger starts it over.
func (s *SessionSweep) sweep(ctx context.Context, trigger chan struct{}) {
	defer s.finished()
	start := s.Clock.Now()
	var state SweepState
	var lastRouting time.Time
	routed, routingErr := true, error(nil)
	ended := 0
	for {
		s.round.Lock()
		if s.stopped {
			s.round.Unlock()
			s.Log.Info("stopped ending client sessions", "reason", "the server is made writable", "ended", ended)
			return
		}
		n, writable, err := s.Op.EndSessionsWhileReadOnly(ctx, SweepKeptUsers)
		s.round.Unlock()
		ended += n
		if err != nil && ctx.Err() == nil {
			s.Log.Info("ending the client sessions of the demoted server failed", "error", err.Error())
		}
		now := s.Clock.Now()
		if !writable && err == nil && (lastRouting.IsZero() || now.Sub(lastRouting) >= SweepRoutingEvery) {
			routed, routingErr = s.Routed(ctx)
			lastRouting = now
		}
		var done bool
		var why string
		state, done, why = SweepDone(state, SweepObservation{Now: now, Start: start, Writable: writable,
			Routed: routed, Unknown: err != nil || routingErr != nil})
		if done {
			s.Log.Info("stopped ending client sessions", "reason", why, "ended", ended, "after", s.Clock.Since(start).String())
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-trigger:
			start, state, lastRouting = s.Clock.Now(), SweepState{}, time.Time{}
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
