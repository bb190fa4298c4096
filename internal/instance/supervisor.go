package instance

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

// Supervisor runs mysqld as a child process: it restarts it whenever it exits (a crash, or the
// shutdown that follows a clone) with a growing delay, and stops it cleanly when its context
// ends.
type Supervisor struct {
	// Command builds the command that starts mysqld, afresh for every start; for example
	// mysqld --defaults-file=/etc/mysql/my.cnf, or chroot <rootfs> mysqld ... in tests.
	Command func() *exec.Cmd
	// GracePeriod is how long a shutdown waits after SIGTERM before SIGKILL; keep it below the
	// Pod's terminationGracePeriodSeconds.
	GracePeriod time.Duration
	Backoff     Backoff
	// Adopted, if set, is a running mysqld the previous program of this process started (an
	// in-place update of the instance manager): supervised first, instead of a start.
	Adopted *proc.Child
	Clock   clock.Clock
	Log     logr.Logger

	mu      sync.Mutex
	current *proc.Child
	starts  int
	// startMu is held while mysqld is started, and by Frozen.
	startMu sync.Mutex
}

// Frozen runs fn with the pid of the running mysqld (0 when none runs) while no mysqld can be
// started: an in-place update hands that pid to the next program, which must not find another
// mysqld started meanwhile.
func (s *Supervisor) Frozen(fn func(pid int)) {
	s.startMu.Lock()
	defer s.startMu.Unlock()
	fn(s.PID())
}

// ErrKilled is returned by Run when mysqld had to be killed after the grace period.
var ErrKilled = errors.New("mysqld did not stop within the grace period and was killed")

// Run supervises mysqld until ctx ends, then shuts it down: SIGTERM, and SIGKILL after the grace
// period. It returns nil after a clean shutdown, ErrKilled after a forced one.
func (s *Supervisor) Run(ctx context.Context) error {
	if s.Clock == nil {
		s.Clock = clock.RealClock{}
	}
	delay := time.Duration(0)
	for {
		s.startMu.Lock()
		c, err := s.start()
		s.startMu.Unlock()
		if err != nil {
			return err
		}
		started := s.Clock.Now()
		select {
		case <-ctx.Done():
			return s.stop(c)
		case <-c.Done():
		}
		ranFor := s.Clock.Since(started)
		delay = s.Backoff.Next(delay, ranFor)
		s.Log.Info("mysqld exited; restarting", "pid", c.Pid(), "status", exitStatus(c.Wait()),
			"ranFor", ranFor.Round(time.Millisecond), "delay", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-s.Clock.After(delay):
		}
	}
}

// PID returns the process id of the running mysqld, 0 when none runs.
func (s *Supervisor) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil || s.current.Exited() {
		return 0
	}
	return s.current.Pid()
}

// Starts returns how many times mysqld was started.
func (s *Supervisor) Starts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts
}

// start starts mysqld tied to this process (see package proc): in its own process group, and
// killed by the kernel if the instance manager dies.
func (s *Supervisor) start() (*proc.Child, error) {
	if c := s.Adopted; c != nil {
		s.Adopted = nil
		s.mu.Lock()
		s.current = c
		s.mu.Unlock()
		s.Log.Info("supervising the mysqld the previous program of the instance manager started", "pid", c.Pid())
		return c, nil
	}
	c, err := proc.StartTied(s.Command())
	if err != nil {
		return nil, fmt.Errorf("starting mysqld: %w", err)
	}
	s.mu.Lock()
	s.current = c
	s.starts++
	s.mu.Unlock()
	s.Log.Info("started mysqld", "pid", c.Pid())
	return c, nil
}

// stop sends SIGTERM to the process group and waits for the grace period, then kills it.
func (s *Supervisor) stop(c *proc.Child) error {
	begin := s.Clock.Now()
	if err := c.Terminate(s.Clock.After(s.GracePeriod)); errors.Is(err, proc.ErrKilled) {
		s.Log.Info("mysqld killed after the grace period", "gracePeriod", s.GracePeriod)
		return ErrKilled
	}
	s.Log.Info("mysqld stopped", "status", exitStatus(c.Wait()), "took", s.Clock.Since(begin).Round(time.Millisecond))
	return nil
}

func exitStatus(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}
