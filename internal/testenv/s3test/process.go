package s3test

import (
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

// startProcess starts cmd tied to the test binary (see package proc), collecting its output.
func startProcess(cmd *exec.Cmd) (*proc.Child, *proc.Output, error) {
	output := &proc.Output{}
	cmd.Stdout, cmd.Stderr = output, output
	p, err := proc.StartTied(cmd)
	if err != nil {
		return nil, nil, fmt.Errorf("starting versitygw: %w", err)
	}
	return p, output, nil
}

// stopProcess sends SIGTERM and, if the process has not exited within timeout, SIGKILL. It
// returns once the process is gone.
func stopProcess(p *proc.Child, timeout time.Duration) error {
	if err := p.Stop(timeout); errors.Is(err, proc.ErrKilled) {
		return fmt.Errorf("versitygw (pid %d) did not stop within %s and was killed", p.Pid(), timeout)
	}
	return nil
}
