package mysqldtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// PID returns the process id of the current mysqld run, 0 if none was started.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.Pid()
}

// Running reports whether mysqld is running (it may have exited on its own, as a clone recipient
// does after CLONE INSTANCE).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.Exited()
}

// WaitExit waits up to timeout for mysqld to exit on its own.
func (s *Server) WaitExit(timeout time.Duration) error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || waitProcess(p, timeout) {
		return nil
	}
	return fmt.Errorf("mysqld %s still running after %s", s.Addr(), timeout)
}

// Stop shuts mysqld down cleanly (SIGTERM), killing it if it does not exit within 30 s, and
// waits for the process to be gone. The data directory is kept: Restart starts it again. It
// returns an error if mysqld had to be killed or exited with a failure status.
func (s *Server) Stop() error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || p.Exited() {
		return nil
	}
	if err := stopProcess(p, stopTimeout); err != nil {
		return err
	}
	if err := p.Err(); err != nil {
		return fmt.Errorf("mysqld %s exited with %w", s.Addr(), err)
	}
	return nil
}

// Kill sends SIGKILL to mysqld, as a crash would, and waits for the process to be gone.
func (s *Server) Kill() error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	return killProcess(p)
}

// Restart stops mysqld if it runs and starts it again on the same data directory, address and
// port, waiting until it accepts connections.
func (s *Server) Restart() error {
	if s.isClosed() {
		return errors.New("mysqldtest: restart of a closed server")
	}
	if err := s.Stop(); err != nil {
		return err
	}
	return s.launch(context.Background(), false)
}

// Close stops mysqld and removes the server's directory. It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	stopErr := s.Stop()
	if stopErr != nil {
		_ = s.Kill()
	}
	s.deregisterTLS()
	if err := os.RemoveAll(s.Dir); err != nil {
		return errors.Join(stopErr, fmt.Errorf("removing %s: %w", s.Dir, err))
	}
	return stopErr
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
