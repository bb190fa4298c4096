package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Ack is one acknowledged insert: its id, when the client saw the COMMIT succeed, and the server
// that committed it (@@server_uuid and @@hostname read in the same transaction).
type Ack struct {
	ID     int64     `json:"id"`
	At     time.Time `json:"at"`
	Server string    `json:"server"`
	Host   string    `json:"host"`
}

// SlowAttemptAfter is how long an attempt may take before the Writer records it as slow: a
// handover's write unavailability is made of failed attempts, and one that waits for its timeout
// (a dial, a statement or a COMMIT that gets no answer) is most of it.
const SlowAttemptAfter = time.Second

// SlowAttempt is one attempt that took SlowAttemptAfter or longer: when it started, how long it
// took, the step it was at when it ended (dial, begin, insert, select, commit, done), the server
// that answered the insert's SELECT (when it got that far) and its error ("" when acknowledged).
type SlowAttempt struct {
	ID       int64         `json:"id"`
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration"`
	Step     string        `json:"step"`
	Host     string        `json:"host,omitempty"`
	Error    string        `json:"error,omitempty"`
}

func (a SlowAttempt) String() string {
	s := fmt.Sprintf("%s %s at %s", a.Start.Format("15:04:05.000"), a.Duration.Round(time.Millisecond), a.Step)
	if a.Host != "" {
		s += " on " + a.Host
	}
	if a.Error != "" {
		s += " (" + a.Error + ")"
	}
	return s
}

// WriterKind is how a Writer treats its connection, as a kind of application does.
type WriterKind string

const (
	// KeptConnection keeps its connection until an attempt fails, then dials afresh.
	KeptConnection WriterKind = ""
	// ConnectionPerInsert dials a new connection for every insert.
	ConnectionPerInsert WriterKind = "per-insert"
	// PooledSession keeps its connection until the connection itself is lost, and dials again at
	// once: a statement the server refuses (read-only, say) leaves the session in use, as a
	// connection pool does. A pool left on a demoted primary fails every write until the session
	// is ended.
	PooledSession WriterKind = "pool"
)

// Refusal is an attempt the server answered with an error (read-only, say): when, the server
// that refused (@@hostname of the session) and the error.
type Refusal struct {
	At    time.Time `json:"at"`
	Host  string    `json:"host"`
	Error string    `json:"error"`
}

// Writer inserts one row per Interval through Addr (the -rw Service) and records every
// acknowledged insert. How it keeps its connection is its Kind: by default a failed attempt drops
// the connection and the next attempt dials afresh. An attempt whose COMMIT got no answer has an
// unknown outcome: it is counted, never as acknowledged.
type Writer struct {
	Env      *Env
	Account  Account
	Addr     string
	Kind     WriterKind
	Interval time.Duration
	// Timeout bounds one attempt (dial, insert, commit).
	Timeout time.Duration
	// FirstID is the id of the first insert; ids grow by one per attempt and are never reused.
	FirstID int64

	mu      sync.Mutex
	acks    []Ack
	unknown []int64
	slow    []SlowAttempt
	refused []Refusal
	failed  int
	last    string // last error
}

// Run writes until ctx ends.
func (w *Writer) Run(ctx context.Context) error {
	c, err := w.Env.newConn(w.Account, w.Addr, w.Timeout)
	if err != nil {
		return err
	}
	defer c.close()
	tick := time.NewTicker(w.Interval)
	defer tick.Stop()
	for id := w.FirstID; ; id++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, w.Timeout)
		ack, step, committed, err := w.insert(actx, c, id)
		cancel()
		took := time.Since(start)
		w.mu.Lock()
		if took >= SlowAttemptAfter {
			sa := SlowAttempt{ID: id, Start: start, Duration: took, Step: step, Host: ack.Host}
			if err != nil {
				sa.Error = err.Error()
			}
			w.slow = append(w.slow, sa)
		}
		switch {
		case err == nil:
			w.acks = append(w.acks, ack)
		case committed:
			w.unknown = append(w.unknown, id)
		default:
			w.failed++
		}
		if err != nil {
			w.last = err.Error()
		}
		w.mu.Unlock()
		var refused *mysql.MySQLError
		switch {
		case w.Kind == PooledSession && errors.As(err, &refused):
			// The server answered: the session stays in use, as a pool keeps it.
			w.refusedBy(ctx, c, start, err)
		case err != nil || w.Kind == ConnectionPerInsert:
			c.drop()
		}
	}
}

// refusedBy records an attempt started at start that the server of c's session refused.
func (w *Writer) refusedBy(ctx context.Context, c *conn, start time.Time, err error) {
	r := Refusal{At: start, Error: err.Error()}
	if sc, gerr := c.get(ctx); gerr == nil {
		hctx, cancel := context.WithTimeout(ctx, w.Timeout)
		_ = sc.QueryRowContext(hctx, "SELECT @@hostname").Scan(&r.Host)
		cancel()
	}
	w.mu.Lock()
	w.refused = append(w.refused, r)
	w.mu.Unlock()
}

// insert runs one transaction; step is the step it ended at, committed says the COMMIT was sent
// (its outcome unknown on error).
func (w *Writer) insert(ctx context.Context, c *conn, id int64) (ack Ack, step string, committed bool, err error) {
	sc, err := c.get(ctx)
	if err != nil {
		return Ack{}, "dial", false, err
	}
	tx, err := sc.BeginTx(ctx, nil)
	if err != nil {
		return Ack{}, "begin", false, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx,
		"INSERT INTO chaos.writes (id, server_uuid, at) VALUES (?, @@server_uuid, NOW(6))", id); err != nil {
		return Ack{}, "insert", false, err
	}
	ack = Ack{ID: id}
	if err := tx.QueryRowContext(ctx, "SELECT @@server_uuid, @@hostname").Scan(&ack.Server, &ack.Host); err != nil {
		return Ack{}, "select", false, err
	}
	if err := tx.Commit(); err != nil {
		if err == sql.ErrTxDone {
			return Ack{Host: ack.Host}, "commit", false, err
		}
		return Ack{Host: ack.Host}, "commit", true, err
	}
	ack.At = time.Now()
	return ack, "done", false, nil
}

// WriterStats is a copy of what the Writer recorded so far.
type WriterStats struct {
	Acks    []Ack
	Unknown []int64
	// Slow are the attempts that took SlowAttemptAfter or longer.
	Slow []SlowAttempt
	// Refused are the attempts of a PooledSession writer the server refused.
	Refused   []Refusal
	Failed    int
	LastError string
}

// Stats copies the records.
func (w *Writer) Stats() WriterStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return WriterStats{Acks: append([]Ack(nil), w.acks...), Unknown: append([]int64(nil), w.unknown...),
		Slow: append([]SlowAttempt(nil), w.slow...), Refused: append([]Refusal(nil), w.refused...), Failed: w.failed, LastError: w.last}
}
