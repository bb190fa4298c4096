package localmysqld

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// DefaultMysqld is the mysqld binary of MySQL and Percona images.
const DefaultMysqld = "/usr/sbin/mysqld"

// Command says how to run mysqld.
type Command struct {
	// Argv is the program and its leading arguments: ["/usr/sbin/mysqld"] in a Pod,
	// ["/usr/sbin/chroot", rootfs, "/usr/sbin/mysqld"] in tests. Empty means DefaultMysqld.
	Argv []string
	// Root is the host directory mysqld sees as "/" (the chroot), "" when it shares the host's
	// view. Paths handed to mysqld are translated with Path.
	Root string
	// Args are appended to every mysqld command line after the package's own, so they override
	// them (e.g. --user=root, memory settings). They must never carry a secret.
	Args []string
}

// Path translates a host path into the path mysqld sees.
func (c Command) Path(hostPath string) string {
	if c.Root == "" {
		return hostPath
	}
	rel, err := filepath.Rel(c.Root, hostPath)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return hostPath
	}
	return "/" + rel
}

func (c Command) argv(args []string) []string {
	base := c.Argv
	if len(base) == 0 {
		base = []string{DefaultMysqld}
	}
	out := append(append([]string{}, base...), args...)
	return append(out, c.Args...)
}

// process is one run of mysqld.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the result of Wait, valid once done is closed
}

// start launches mysqld in its own process group. The kernel kills it if the starting thread
// dies (Pdeathsig fires on the thread, not the process): the goroutine that starts it keeps its
// OS thread locked until mysqld exits.
func (c Command) start(args []string, output io.Writer) (*process, error) {
	argv := c.argv(args)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TZ=UTC"}
	cmd.Stdout, cmd.Stderr = output, output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &process{cmd: cmd, done: make(chan struct{})}
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
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	return p, nil
}

// run runs mysqld to completion, killing it if ctx ends first.
func (c Command) run(ctx context.Context, args []string, output io.Writer) error {
	p, err := c.start(args, output)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		p.kill()
		return fmt.Errorf("mysqld interrupted: %w", context.Cause(ctx))
	}
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
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// kill sends SIGKILL to the process group and waits for mysqld to be gone.
func (p *process) kill() {
	p.signal(syscall.SIGKILL)
	<-p.done
}
