package mysqldtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// process is one run of mysqld.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the result of Wait, valid once done is closed
}

// mysqldCommand prepares mysqld chrooted into rootfs, in its own process group, killed by the
// kernel if the thread that started it dies.
func mysqldCommand(rootfs string, args []string, output io.Writer) *exec.Cmd {
	cmd := exec.Command(mysqldPath, args...)
	cmd.Dir = "/" // applied after the chroot
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "TZ=UTC"}
	cmd.Stdout, cmd.Stderr = output, output
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:    rootfs,
		Setpgid:   true,
		Pdeathsig: syscall.SIGKILL,
	}
	return cmd
}

// startProcess starts mysqld. Pdeathsig fires when the thread that forked the child exits, not
// when the process does, so the goroutine that starts mysqld keeps its thread locked, and thus
// alive and unshared, until mysqld has exited.
func startProcess(rootfs string, args []string, output io.Writer) (*process, error) {
	p := &process{cmd: mysqldCommand(rootfs, args, output), done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := p.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting mysqld: %w", err)
	}
	return p, nil
}

// runProcess runs mysqld to completion, killing it if ctx ends first.
func runProcess(ctx context.Context, rootfs string, args []string, output io.Writer) error {
	p, err := startProcess(rootfs, args, output)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		_ = p.kill()
		return fmt.Errorf("mysqld interrupted: %w", ctx.Err())
	}
	if p.err != nil {
		return fmt.Errorf("mysqld failed: %w", p.err)
	}
	return nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig to mysqld's process group.
func (p *process) signal(sig syscall.Signal) error {
	if p.exited() {
		return nil
	}
	if err := syscall.Kill(-p.pid(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("sending %v to mysqld (pid %d): %w", sig, p.pid(), err)
	}
	return nil
}

// wait waits up to timeout for mysqld to exit.
func (p *process) wait(timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return true
	case <-timer.C:
		return false
	}
}

// stop asks mysqld to shut down with SIGTERM and kills it if it has not exited within timeout.
func (p *process) stop(timeout time.Duration) error {
	if err := p.signal(syscall.SIGTERM); err != nil {
		return err
	}
	if p.wait(timeout) {
		return nil
	}
	if err := p.kill(); err != nil {
		return err
	}
	return fmt.Errorf("mysqld (pid %d) did not shut down within %s and was killed", p.pid(), timeout)
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *process) kill() error {
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	if !p.wait(30 * time.Second) {
		return fmt.Errorf("mysqld (pid %d) survived SIGKILL", p.pid())
	}
	return nil
}
