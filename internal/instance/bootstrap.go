package instance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// MysqldCommand builds the command that runs mysqld with its my.cnf and extra arguments after
// it (--defaults-file must come first on mysqld's command line).
type MysqldCommand func(extraArgs ...string) *exec.Cmd

// HasData reports whether dataDir (a path the instance manager sees) holds an initialized data
// directory: the data dictionary tablespace mysql.ibd exists.
func HasData(dataDir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dataDir, "mysql.ibd"))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("inspecting the data directory: %w", err)
}

// InitializeDataDir creates the system tables in an empty data directory with
// mysqld --initialize-insecure. root@localhost gets no password: skip_name_resolve (set by
// my.cnf) limits it to the local socket, which only the instance manager reaches.
func InitializeDataDir(ctx context.Context, mysqld MysqldCommand) error {
	cmd := mysqld("--initialize-insecure")
	if err := runUntilDone(ctx, cmd); err != nil {
		return fmt.Errorf("initializing the data directory: %w", err)
	}
	return nil
}

// runUntilDone runs cmd, killing it if ctx ends first; its output is returned in the error.
func runUntilDone(ctx context.Context, cmd *exec.Cmd) error {
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%w: %s", err, out.String())
		}
		return nil
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		return ctx.Err()
	}
}

// limitedBuffer keeps the last 4 KiB written to it.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.b = append(l.b, p...)
	if len(l.b) > 4096 {
		l.b = l.b[len(l.b)-4096:]
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
