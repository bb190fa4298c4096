package proc

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// ErrKilled is returned by Stop and Terminate when the child did not exit after SIGTERM and had
// to be killed.
var ErrKilled = errors.New("did not exit after SIGTERM and was killed")

// Child is a process started by StartTied.
type Child struct {
	pid   int
	done  chan struct{}
	err   error            // the result of cmd.Wait, written before done is closed
	state *os.ProcessState // the exit status, written before done is closed

	stopOnce sync.Once
	stopErr  error
}

// StartTied starts cmd in its own process group, killed by the kernel if this process dies. It
// keeps the caller's SysProcAttr settings (Chroot, credentials) and sets Setpgid, and Pdeathsig
// unless this process is the init of its PID namespace (IsNamespaceInit): there the kernel ends
// every process of the namespace when it exits, and a child without a parent-death signal
// survives this process replacing itself (Reexec). The returned error is the one of cmd.Start.
func StartTied(cmd *exec.Cmd) (*Child, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if !IsNamespaceInit() {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	c := &Child{done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread that forked the child must live until the child has exited,
		// and it ends with this goroutine.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		c.pid = cmd.Process.Pid
		started <- nil
		c.err = cmd.Wait()
		c.state = cmd.ProcessState
		close(c.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return c, nil
}

// Pid is the child's process id, which is also its process group id.
func (c *Child) Pid() int { return c.pid }

// Done is closed once the child has exited and been reaped.
func (c *Child) Done() <-chan struct{} { return c.done }

// Exited reports whether the child has exited.
func (c *Child) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Wait waits for the child to exit and returns the result of cmd.Wait; it may be called any
// number of times, from any goroutine.
func (c *Child) Wait() error {
	<-c.done
	return c.err
}

// Err returns the result of cmd.Wait once the child has exited, nil while it runs.
func (c *Child) Err() error {
	if !c.Exited() {
		return nil
	}
	return c.err
}

// State is the child's process state (exit status, resource usage) once it has exited, nil while
// it runs.
func (c *Child) State() *os.ProcessState {
	if !c.Exited() {
		return nil
	}
	return c.state
}

// Signal sends sig to the child's process group, so that whatever the child started in it gets
// sig too. It does nothing once the child has exited.
func (c *Child) Signal(sig syscall.Signal) error {
	if c.Exited() {
		return nil
	}
	err := syscall.Kill(-c.pid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	// The group may be out of reach (the child left it); the child itself is not.
	if err := syscall.Kill(c.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Kill sends SIGKILL to the child's process group and waits for the child to be gone.
func (c *Child) Kill() {
	_ = c.Signal(syscall.SIGKILL)
	<-c.done
}

// Terminate asks the child to exit with SIGTERM and kills its group with SIGKILL if it has not
// exited when giveUp delivers; it returns once the child has exited: nil after SIGTERM alone,
// ErrKilled after SIGKILL. Only the first call of Terminate or Stop acts; every later or
// concurrent call waits for the child and returns that first call's result.
func (c *Child) Terminate(giveUp <-chan time.Time) error {
	c.stopOnce.Do(func() {
		if c.Exited() {
			return
		}
		_ = c.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
			return
		case <-giveUp:
		}
		if c.Exited() {
			return
		}
		c.Kill()
		c.stopErr = ErrKilled
	})
	<-c.done
	return c.stopErr
}

// Stop is Terminate with a grace period measured on the real clock.
func (c *Child) Stop(grace time.Duration) error {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	return c.Terminate(timer.C)
}

// Run starts cmd tied to this process and waits for it, as cmd.Run does; a cmd made by
// exec.CommandContext is still ended by its context.
func Run(cmd *exec.Cmd) error {
	c, err := StartTied(cmd)
	if err != nil {
		return err
	}
	return c.Wait()
}
