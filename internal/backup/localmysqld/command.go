package localmysqld

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
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

// Tool returns the command line of one of the image's client programs (mysqlbinlog, mysql) at
// program, its path as mysqld sees it: Argv with its last element, the mysqld program, replaced,
// so a chroot prefix applies to it too. Args (mysqld options) are not added.
func (c Command) Tool(program string, args ...string) []string {
	base := c.Argv
	if len(base) == 0 {
		base = []string{DefaultMysqld}
	}
	out := append(append([]string{}, base[:len(base)-1]...), program)
	return append(out, args...)
}

// start launches mysqld tied to this process (see package proc): in its own process group, and
// killed by the kernel if this process dies.
func (c Command) start(args []string, output io.Writer) (*proc.Child, error) {
	argv := c.argv(args)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TZ=UTC"}
	cmd.Stdout, cmd.Stderr = output, output
	p, err := proc.StartTied(cmd)
	if err != nil {
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
	case <-p.Done():
		return p.Wait()
	case <-ctx.Done():
		p.Kill()
		return fmt.Errorf("mysqld interrupted: %w", context.Cause(ctx))
	}
}
