package s3test

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// process is one run of versitygw.
type process struct {
	cmd    *exec.Cmd
	output *lockedBuffer
	done   chan struct{}
	err    error // the result of Wait, valid once done is closed
}

// startProcess starts cmd in its own process group, killed by the kernel if the starting thread
// dies (Pdeathsig). That thread stays locked to the goroutine below until the process has exited,
// so that it neither exits early nor is reused.
func startProcess(cmd *exec.Cmd) (*process, error) {
	p := &process{cmd: cmd, output: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.output, p.output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting versitygw: %w", err)
	}
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *process) signal(sig syscall.Signal) {
	if !p.exited() {
		if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			_ = p.cmd.Process.Signal(sig)
		}
	}
}

// stop sends SIGTERM and, if the process has not exited within timeout, SIGKILL. It returns
// once the process is gone.
func (p *process) stop(timeout time.Duration) error {
	p.signal(syscall.SIGTERM)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	p.signal(syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("versitygw (pid %d) did not stop within %s and was killed", p.cmd.Process.Pid, timeout)
}

// lockedBuffer collects the output of the process.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
