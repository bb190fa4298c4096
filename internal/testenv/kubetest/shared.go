package kubetest

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// Shared is one control plane for a whole test binary, started on first use so that tests of
// the package that need none run without it.
type Shared struct {
	opts Options
	once sync.Once
	env  *Env
	err  error
}

// NewShared returns a Shared that starts with opts.
func NewShared(opts Options) *Shared { return &Shared{opts: opts} }

// Get starts the control plane on the first call and returns it; it fails the test when the
// control plane cannot start.
func (s *Shared) Get(t testing.TB) *Env {
	t.Helper()
	s.once.Do(func() { s.env, s.err = Start(s.opts) })
	if s.err != nil {
		t.Fatalf("starting the control plane: %v", s.err)
	}
	return s.env
}

// Main runs the tests, stops the control plane if one was started, and exits: call it from
// TestMain.
func (s *Shared) Main(m *testing.M) {
	code := m.Run()
	if s.env != nil {
		if err := s.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
			code = 1
		}
	}
	os.Exit(code)
}
