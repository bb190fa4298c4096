package mysqldtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

// mysqldCommand prepares mysqld chrooted into rootfs.
func mysqldCommand(rootfs string, args []string, output io.Writer) *exec.Cmd {
	cmd := exec.Command(mysqldPath, args...)
	cmd.Dir = "/" // applied after the chroot
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "TZ=UTC"}
	cmd.Stdout, cmd.Stderr = output, output
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs}
	return cmd
}

// startProcess starts mysqld tied to the test binary (see package proc): in its own process
// group, and killed by the kernel if the test binary dies.
func startProcess(rootfs string, args []string, output io.Writer) (*proc.Child, error) {
	p, err := proc.StartTied(mysqldCommand(rootfs, args, output))
	if err != nil {
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
	case <-p.Done():
	case <-ctx.Done():
		_ = killProcess(p)
		return fmt.Errorf("mysqld interrupted: %w", ctx.Err())
	}
	if err := p.Wait(); err != nil {
		return fmt.Errorf("mysqld failed: %w", err)
	}
	return nil
}

// waitProcess waits up to timeout for mysqld to exit.
func waitProcess(p *proc.Child, timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.Done():
		return true
	case <-timer.C:
		return false
	}
}

// stopProcess asks mysqld to shut down with SIGTERM and kills it if it has not exited within
// timeout.
func stopProcess(p *proc.Child, timeout time.Duration) error {
	if err := p.Stop(timeout); errors.Is(err, proc.ErrKilled) {
		return fmt.Errorf("mysqld (pid %d) did not shut down within %s and was killed", p.Pid(), timeout)
	}
	return nil
}

// killProcess sends SIGKILL to mysqld's process group and waits for the process to be gone.
func killProcess(p *proc.Child) error {
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("sending SIGKILL to mysqld (pid %d): %w", p.Pid(), err)
	}
	if !waitProcess(p, 30*time.Second) {
		return fmt.Errorf("mysqld (pid %d) survived SIGKILL", p.Pid())
	}
	return nil
}
