package instance

import (
	"context"
	"errors"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"os/exec"
	"testing"
	"time"
)

func TestBackoffNext(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: 8 * time.Second, Stable: time.Minute}
	for _, tc := range []struct {
		name         string
		prev, ranFor time.Duration
		want         time.Duration
	}{
		{"first restart waits the initial delay", 0, time.Second, time.Second},
		{"a quick crash doubles the delay", 2 * time.Second, time.Second, 4 * time.Second},
		{"the delay stops at the maximum", 8 * time.Second, time.Second, 8 * time.Second},
		{"a stable run resets it", 8 * time.Second, 2 * time.Minute, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := b.Next(tc.prev, tc.ranFor); got != tc.want {
				t.Errorf("Next(%s, %s) = %s, want %s", tc.prev, tc.ranFor, got, tc.want)
			}
		})
	}
}

// runSupervisor runs s until the returned cancel is called; wait returns Run's result (once).
func runSupervisor(t *testing.T, s *Supervisor) (cancel func(), wait func() error) {
	t.Helper()
	ctx, cancelCtx := context.WithCancel(t.Context())
	done := make(chan struct{})
	var err error
	go func() {
		err = s.Run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancelCtx()
		<-done
	})
	return cancelCtx, func() error { <-done; return err }
}

func TestSupervisorRestartsAnExitedChild(t *testing.T) {
	s := &Supervisor{
		Command:     func() *exec.Cmd { return exec.Command("/bin/sh", "-c", "exit 3") },
		GracePeriod: time.Second,
		Backoff:     Backoff{Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond, Stable: time.Minute},
	}
	cancel, wait := runSupervisor(t, s)
	eventually(t, 5*time.Second, func() bool { return s.Starts() >= 4 })
	cancel()
	if err := wait(); err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}

func TestSupervisorKillsAfterTheGracePeriod(t *testing.T) {
	s := &Supervisor{
		// An ignored SIGTERM is inherited by sleep, so the whole group ignores it.
		Command:     func() *exec.Cmd { return exec.Command("/bin/sh", "-c", "trap '' TERM; sleep 60") },
		GracePeriod: 200 * time.Millisecond,
		Backoff:     Backoff{Initial: time.Second, Max: time.Second, Stable: time.Minute},
	}
	cancel, wait := runSupervisor(t, s)
	eventually(t, 5*time.Second, func() bool { return s.PID() != 0 })
	time.Sleep(50 * time.Millisecond) // let sh install its trap
	begin := time.Now()
	cancel()
	if err := wait(); !errors.Is(err, ErrKilled) {
		t.Errorf("Run = %v, want ErrKilled", err)
	}
	if took := time.Since(begin); took < 200*time.Millisecond || took > 3*time.Second {
		t.Errorf("forced stop took %s, want about the 200ms grace period", took)
	}
	if s.PID() != 0 {
		t.Error("child still running")
	}
}

// eventually is check.Eventually for a condition without an error or a description.
func eventually(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	check.Eventually(t, timeout, "condition", check.True(cond))
}
