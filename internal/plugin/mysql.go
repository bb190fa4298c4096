package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// socketPath is mysqld's socket in the instance container.
const socketPath = "/controller/run/mysqld.sock"

// The remote commands of `mysql`: a shell reads root's password from its standard input into
// MYSQL_PWD (never a command line) and runs the client as root over the local socket with the
// user's arguments. On a terminal, echo is off while the password is read, and the shell prints
// passwordPrompt once it is: the plugin sends the password only then, so the terminal never shows
// it.
const (
	passwordPrompt = '\x01'
	scriptPiped    = `IFS= read -r MYSQL_PWD && export MYSQL_PWD && exec mysql -uroot -S ` + socketPath + ` "$@"`
	// Without stty the echo cannot be turned off: the shell exits before the prompt byte, so the
	// password is never sent (exit status noEchoExit).
	scriptTTY  = `stty -echo 2>/dev/null || exit 97; printf '\001'; IFS= read -r MYSQL_PWD; stty echo; export MYSQL_PWD; exec mysql -uroot -S ` + socketPath + ` "$@"`
	noEchoExit = 97
)

// MySQLCommand is the command run in the instance container for mysql's arguments args.
func MySQLCommand(tty bool, args []string) []string {
	script := scriptPiped
	if tty {
		script = scriptTTY
	}
	return append([]string{"sh", "-c", script, "mysql"}, args...)
}

func newMySQLCommand(e *env) *cobra.Command {
	var replica bool
	cmd := &cobra.Command{
		Use:   "mysql CLUSTER [INSTANCE] [-- MYSQL-ARGS...]",
		Short: "Run the mysql client as root in the primary's (or a replica's, or INSTANCE's) container",
		Long: "Runs mysql as root@localhost over the instance's local socket, interactive on a terminal. The password\n" +
			"(from the Secret <cluster>-root, which your account must be allowed to read) reaches the client on its\n" +
			"standard input: never on a command line, and never shown on the terminal. Arguments after -- go to mysql:\n" +
			"  kubectl cloudnative-mysql mysql db -- -e 'SELECT @@hostname'",
		Args: func(cmd *cobra.Command, args []string) error {
			n := len(args)
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				n = at // the arguments after -- are mysql's
			}
			if n < 1 || n > 2 {
				return fmt.Errorf("usage: mysql CLUSTER [INSTANCE] [-- MYSQL-ARGS...]; %d argument(s) before --", n)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var mysqlArgs []string
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				args, mysqlArgs = args[:at], args[at:]
			}
			if len(args) == 0 || len(args) > 2 {
				return fmt.Errorf("usage: mysql CLUSTER [INSTANCE] [-- MYSQL-ARGS...]")
			}
			instance := ""
			if len(args) == 2 {
				instance = args[1]
			}
			return e.runMySQL(cmd.Context(), args[0], instance, replica, mysqlArgs, cmd.InOrStdin())
		},
	}
	cmd.Flags().BoolVar(&replica, "replica", false, "a ready replica instead of the primary")
	return cmd
}

func (e *env) runMySQL(ctx context.Context, clusterName, instance string, replica bool, args []string, stdin io.Reader) error {
	c, ns, err := e.client()
	if err != nil {
		return err
	}
	cluster, err := getCluster(ctx, c, ns, clusterName)
	if err != nil {
		return err
	}
	pod, err := pickInstance(ctx, c, cluster, instance, replica)
	if err != nil {
		return err
	}
	var secret corev1.Secret
	name := specs.UserSecretName(cluster.Name, specs.UserRoot)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &secret); err != nil {
		return fmt.Errorf("reading root's password from Secret %s/%s: %w (the mysql verb needs get on that Secret)", ns, name, err)
	}
	password := secret.Data[corev1.BasicAuthPasswordKey]
	if len(password) == 0 {
		return fmt.Errorf("the Secret %s/%s has no %s", ns, name, corev1.BasicAuthPasswordKey)
	}
	cs, cfg, err := e.clientset()
	if err != nil {
		return err
	}
	fd, isFile := fdOf(stdin)
	tty := isFile && term.IsTerminal(fd) && isTerminal(e.streams.Out) // a redirected output gets no terminal codes
	exec, err := newExecutor(cs, cfg, ns, pod, &corev1.PodExecOptions{Container: mysqlContainer, Command: MySQLCommand(tty, args),
		Stdin: true, Stdout: true, Stderr: !tty, TTY: tty})
	if err != nil {
		return err
	}
	in, out, ready := withPassword(password, stdin, e.streams.Out, tty)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-ready:
		case <-ctx.Done():
		case <-time.After(promptTimeout):
			cancel(fmt.Errorf("the instance's shell did not ask for the password within %s", promptTimeout))
		}
	}()
	opts := remotecommand.StreamOptions{Stdin: in, Stdout: out, Tty: tty}
	if !tty {
		opts.Stderr = e.streams.ErrOut
	} else {
		state, err := term.MakeRaw(fd)
		if err != nil {
			return fmt.Errorf("setting the terminal raw: %w", err)
		}
		defer func() { _ = term.Restore(fd, state) }()
		if w, h, err := term.GetSize(fd); err == nil {
			opts.TerminalSizeQueue = &oneSize{size: &remotecommand.TerminalSize{Width: uint16(w), Height: uint16(h)}}
		}
	}
	if err := exec.StreamWithContext(ctx, opts); err != nil {
		var exit interface{ ExitStatus() int }
		if tty && errors.As(err, &exit) && exit.ExitStatus() == noEchoExit {
			return fmt.Errorf("mysql in %s: the container cannot turn the terminal's echo off (no stty), so the password is not sent "+
				"to an interactive session; pipe the statements instead (echo 'SELECT 1' | kubectl cloudnative-mysql mysql %s)", pod, clusterName)
		}
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return fmt.Errorf("mysql in %s: %w", pod, cause)
		}
		return fmt.Errorf("mysql in %s: %w", pod, err)
	}
	return nil
}

// newExecutor runs opts in pod over WebSockets, or SPDY where the API server does not upgrade to
// WebSockets (as kubectl exec does).
func newExecutor(cs kubernetes.Interface, cfg *rest.Config, ns, pod string, opts *corev1.PodExecOptions) (remotecommand.Executor, error) {
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(opts, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// execOutput runs command in pod's container and returns its standard output.
func execOutput(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, ns, pod, container string, command ...string) ([]byte, error) {
	exec, err := newExecutor(cs, cfg, ns, pod, &corev1.PodExecOptions{Container: container, Command: command, Stdout: true, Stderr: true})
	if err != nil {
		return nil, err
	}
	var out, errOut bytes.Buffer
	if err := exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut}); err != nil {
		return nil, fmt.Errorf("%w: %s", err, bytes.TrimSpace(errOut.Bytes()))
	}
	return out.Bytes(), nil
}

// withPassword returns the exec's standard input, which starts with the password line, and its
// output. On a terminal the password is held back until the remote shell prints passwordPrompt
// (echo off), which the output drops.
func withPassword(password []byte, stdin io.Reader, stdout io.Writer, tty bool) (io.Reader, io.Writer, <-chan struct{}) {
	pr, pw := io.Pipe()
	ready := make(chan struct{})
	out := stdout
	if tty {
		out = &promptStripper{w: stdout, ready: ready}
	} else {
		close(ready)
	}
	go func() {
		<-ready
		if _, err := pw.Write(append(bytes.Clone(password), '\n')); err != nil {
			return
		}
		_, err := io.Copy(pw, stdin)
		pw.CloseWithError(err)
	}()
	return pr, out, ready
}

// promptTimeout bounds the wait for the remote shell's prompt byte on a terminal, where the local
// terminal is raw and Ctrl-C reaches nobody until then.
const promptTimeout = 30 * time.Second

// promptStripper passes output through, dropping the first passwordPrompt and closing ready when
// it sees it.
type promptStripper struct {
	w     io.Writer
	ready chan struct{}
	once  sync.Once
	seen  bool
}

func (p *promptStripper) Write(b []byte) (int, error) {
	n := len(b)
	if !p.seen {
		if i := bytes.IndexByte(b, passwordPrompt); i >= 0 {
			p.seen = true
			b = append(b[:i:i], b[i+1:]...)
			p.once.Do(func() { close(p.ready) })
		}
	}
	if _, err := p.w.Write(b); err != nil {
		return 0, err
	}
	return n, nil
}

// oneSize is a terminal size queue that gives the initial size once.
type oneSize struct{ size *remotecommand.TerminalSize }

func (q *oneSize) Next() *remotecommand.TerminalSize {
	s := q.size
	q.size = nil
	return s
}

// fdOf is the file descriptor behind r, when it is a file.
func fdOf(r io.Reader) (int, bool) {
	if f, ok := r.(*os.File); ok {
		return int(f.Fd()), true
	}
	return 0, false
}
