package instance

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
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
	Clock       clock.Clock
	Log         logr.Logger

	mu      sync.Mutex
	current *child
	starts  int
}

// child is one run of mysqld.
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the result of Wait, valid once done is closed
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
		c, err := s.start()
		if err != nil {
			return err
		}
		started := s.Clock.Now()
		select {
		case <-ctx.Done():
			return s.stop(c)
		case <-c.done:
		}
		ranFor := s.Clock.Since(started)
		delay = s.Backoff.Next(delay, ranFor)
		s.Log.Info("mysqld exited; restarting", "pid", c.cmd.Process.Pid, "status", exitStatus(c.err),
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
	if s.current == nil || s.current.exited() {
		return 0
	}
	return s.current.cmd.Process.Pid
}

// Starts returns how many times mysqld was started.
func (s *Supervisor) Starts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts
}

// start starts mysqld in its own process group. The kernel kills it if the thread that started
// it dies (Pdeathsig), so the starting goroutine keeps its thread locked until mysqld exits.
func (s *Supervisor) start() (*child, error) {
	c := &child{cmd: s.Command(), done: make(chan struct{})}
	if c.cmd.SysProcAttr == nil {
		c.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.cmd.SysProcAttr.Setpgid = true
	c.cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := c.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting mysqld: %w", err)
	}
	s.mu.Lock()
	s.current = c
	s.starts++
	s.mu.Unlock()
	s.Log.Info("started mysqld", "pid", c.cmd.Process.Pid)
	return c, nil
}

// stop sends SIGTERM to the process group and waits for the grace period, then kills it.
func (s *Supervisor) stop(c *child) error {
	begin := s.Clock.Now()
	c.signal(syscall.SIGTERM)
	select {
	case <-c.done:
		s.Log.Info("mysqld stopped", "status", exitStatus(c.err), "took", s.Clock.Since(begin).Round(time.Millisecond))
		return nil
	case <-s.Clock.After(s.GracePeriod):
	}
	c.signal(syscall.SIGKILL)
	<-c.done
	s.Log.Info("mysqld killed after the grace period", "gracePeriod", s.GracePeriod)
	return ErrKilled
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *child) signal(sig syscall.Signal) {
	if !c.exited() {
		_ = syscall.Kill(-c.cmd.Process.Pid, sig)
	}
}

func exitStatus(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}
