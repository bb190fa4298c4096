package instance

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

// MysqldCommand builds the command that runs mysqld with its my.cnf and extra arguments after
// it (--defaults-file must come first on mysqld's command line).
type MysqldCommand func(extraArgs ...string) *exec.Cmd

// runUntilDone runs cmd tied to the instance manager (see package proc), killing it if ctx ends
// first; its output is returned in the error.
func runUntilDone(ctx context.Context, cmd *exec.Cmd) error {
	out := proc.Output{Keep: 4096}
	cmd.Stdout, cmd.Stderr = &out, &out
	c, err := proc.StartTied(cmd)
	if err != nil {
		return err
	}
	select {
	case <-c.Done():
		if err := c.Wait(); err != nil {
			return fmt.Errorf("%w: %s", err, out.String())
		}
		return nil
	case <-ctx.Done():
		c.Kill()
		return ctx.Err()
	}
}
