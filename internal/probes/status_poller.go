package probes

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

const (
	// PollInterval is how often the StatusPoller starts a status query.
	PollInterval = time.Second
	// QueryTimeout bounds one status query.
	QueryTimeout = 2 * time.Second
	// MaxStaleness is the age past which an observation counts as no answer: a query starts at
	// most max(PollInterval, QueryTimeout) after the previous one started and ends within
	// QueryTimeout, so a mysqld that answers within QueryTimeout always has a younger one.
	// It is therefore also the longest a mysqld that stops answering is still reported answering.
	MaxStaleness = max(PollInterval, QueryTimeout) + QueryTimeout
)

// StatusReader is what the poller asks: mysqld's status.
type StatusReader interface {
	Status(ctx context.Context) (*mysql.Status, error)
}

// Observation is one answer of mysqld to the status query: its status, or the error that came
// instead, and when the query started (the status is at least that recent).
type Observation struct {
	Status *mysql.Status
	Err    error
	At     time.Time
}

// Fresh returns the status of o if mysqld answered and o is at most maxAge old at now, else nil.
func (o *Observation) Fresh(now time.Time, maxAge time.Duration) *mysql.Status {
	if o == nil || o.Err != nil || o.Status == nil || now.Sub(o.At) > maxAge {
		return nil
	}
	return o.Status
}

// StatusPoller keeps the newest Observation of mysqld, made by one goroutine (Run) every
// Interval, one query at a time: however many callers read it, mysqld sees one connection and
// one query per Interval from the probes. Safe for concurrent use; Latest never blocks.
type StatusPoller struct {
	Op    StatusReader
	Clock clock.Clock
	Log   logr.Logger
	// Interval is PollInterval and Timeout QueryTimeout when zero.
	Interval, Timeout time.Duration

	latest atomic.Pointer[Observation]
}

// Latest returns the newest observation, nil before the first query ended.
func (p *StatusPoller) Latest() *Observation { return p.latest.Load() }

// MaxAge is the staleness bound of this poller's observations (MaxStaleness with the defaults).
func (p *StatusPoller) MaxAge() time.Duration {
	interval, timeout := p.intervals()
	return max(interval, timeout) + timeout
}

func (p *StatusPoller) intervals() (interval, timeout time.Duration) {
	interval, timeout = p.Interval, p.Timeout
	if interval <= 0 {
		interval = PollInterval
	}
	if timeout <= 0 {
		timeout = QueryTimeout
	}
	return interval, timeout
}

// Run queries mysqld every Interval until ctx ends; a query that outlasts Interval delays the
// next one instead of running beside it.
func (p *StatusPoller) Run(ctx context.Context) {
	interval, timeout := p.intervals()
	for {
		start := p.Clock.Now()
		qctx, cancel := context.WithTimeout(ctx, timeout)
		st, err := p.Op.Status(qctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		p.record(&Observation{Status: st, Err: err, At: start})
		select {
		case <-ctx.Done():
			return
		case <-p.Clock.After(interval - p.Clock.Since(start)):
		}
	}
}

// record stores o and logs what changed since the previous observation: the error text goes to
// the log, never to a probe's body.
func (p *StatusPoller) record(o *Observation) {
	prev := p.latest.Swap(o)
	switch {
	case o.Err != nil && (prev == nil || prev.Err == nil || prev.Err.Error() != o.Err.Error()):
		p.Log.Info("mysqld does not answer the probes' status query", "error", o.Err.Error())
	case o.Err == nil && prev != nil && prev.Err != nil:
		p.Log.Info("mysqld answers the probes' status query again")
	}
	if o.Err == nil && applierErrno(o) != 0 && applierErrno(o) != applierErrno(prev) {
		r := o.Status.Replication
		p.Log.Info("replica applier stopped on an error: not ready", "errno", r.LastSQLErrno, "error", r.LastSQLError)
	}
}

// applierErrno is the replication applier's last error number in o, 0 when none.
func applierErrno(o *Observation) int {
	if o == nil || o.Status == nil || o.Status.Replication == nil {
		return 0
	}
	return o.Status.Replication.LastSQLErrno
}
