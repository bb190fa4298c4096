package localmysqld

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

const (
	pollInterval    = 100 * time.Millisecond
	shutdownTimeout = 60 * time.Second
	socketName      = "mysqld.sock"
	errorLogName    = "error.log"
)

// Options configures one server.
type Options struct {
	// DataDir is the host path of the data directory.
	DataDir string
	// RunDir is a host directory for the socket, pid file and error log; created if missing.
	RunDir string
	// Args are mysqld options added after the package's defaults and before Command.Args.
	Args []string
	// StartTimeout bounds the wait for the socket; 5 minutes when zero (crash recovery of a
	// large restored data directory can take a while).
	StartTimeout time.Duration
}

// Server is a running mysqld reached over its Unix socket.
type Server struct {
	opts Options
	cmd  Command
	proc *proc.Child
	db   *sql.DB
	link string // a short symlink to RunDir, when the socket path is too long to connect to
}

// Initialize creates a data directory with `mysqld --initialize-insecure`: root@localhost has no
// password, which is safe because the server never listens on TCP.
func Initialize(ctx context.Context, c Command, opts Options) error {
	if err := os.MkdirAll(opts.RunDir, 0o750); err != nil {
		return fmt.Errorf("creating %s: %w", opts.RunDir, err)
	}
	logFile := filepath.Join(opts.RunDir, "initialize.log")
	args := append([]string{
		"--no-defaults",
		"--datadir=" + c.Path(opts.DataDir),
		"--log-error=" + c.Path(logFile),
	}, opts.Args...)
	args = append(args, "--initialize-insecure")
	var out bytes.Buffer
	if err := c.run(ctx, args, &out); err != nil {
		log, _ := os.ReadFile(logFile)
		return fmt.Errorf("initializing %s: %w\n%s%s", opts.DataDir, err, out.Bytes(), Tail(log, 20))
	}
	return nil
}

// Start starts mysqld on opts.DataDir, listening on a socket in opts.RunDir only, and returns once
// root can connect.
func Start(ctx context.Context, c Command, opts Options) (*Server, error) {
	if err := os.MkdirAll(opts.RunDir, 0o750); err != nil {
		return nil, fmt.Errorf("creating %s: %w", opts.RunDir, err)
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 5 * time.Minute
	}
	s := &Server{opts: opts, cmd: c}
	args := append([]string{
		"--no-defaults",
		"--datadir=" + c.Path(opts.DataDir),
		"--socket=" + c.Path(s.SocketPath()),
		"--pid-file=" + c.Path(filepath.Join(opts.RunDir, "mysqld.pid")),
		"--log-error=" + c.Path(s.ErrorLogPath()),
		"--skip-networking",
		"--mysqlx=OFF",
		"--secure-file-priv=" + c.Path(opts.RunDir),
	}, opts.Args...)
	console, err := os.OpenFile(filepath.Join(opts.RunDir, "console.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("opening the console log: %w", err)
	}
	defer console.Close()
	if s.proc, err = c.start(args, console); err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		s.proc.Kill()
		return nil, fmt.Errorf("mysqld on %s: %w\n%s", opts.DataDir, err, s.ErrorLogTail(20))
	}
	return s, nil
}

// SocketPath is the host path of the server's socket.
func (s *Server) SocketPath() string { return filepath.Join(s.opts.RunDir, socketName) }

// ErrorLogPath is the host path of the server's error log.
func (s *Server) ErrorLogPath() string { return filepath.Join(s.opts.RunDir, errorLogName) }

// ErrorLogTail returns the last n lines of the error log.
func (s *Server) ErrorLogTail(n int) string {
	b, _ := os.ReadFile(s.ErrorLogPath())
	return Tail(b, n)
}

// DB is a connection pool to the server as root over the socket.
func (s *Server) DB() *sql.DB { return s.db }

// Done is closed when mysqld has exited.
func (s *Server) Done() <-chan struct{} { return s.proc.Done() }

// ExitErr is mysqld's exit error once Done is closed.
func (s *Server) ExitErr() error { return s.proc.Err() }

// maxSocketPath is below the 108 bytes of sun_path, NUL included.
const maxSocketPath = 100

// dialPath returns a path to the socket short enough to connect to: the socket itself, or the
// same file through a symlink to RunDir in the temporary directory.
func (s *Server) dialPath() (string, error) {
	if len(s.SocketPath()) < maxSocketPath {
		return s.SocketPath(), nil
	}
	dir, err := os.MkdirTemp("", "cnm-sock-")
	if err != nil {
		return "", fmt.Errorf("creating a short path to the socket: %w", err)
	}
	s.link = dir
	if err := os.Symlink(s.opts.RunDir, filepath.Join(dir, "r")); err != nil {
		return "", fmt.Errorf("creating a short path to the socket: %w", err)
	}
	return filepath.Join(dir, "r", socketName), nil
}

func (s *Server) closeDB() {
	s.db.Close()
	if s.link != "" {
		_ = os.RemoveAll(s.link)
	}
}

func (s *Server) waitReady(ctx context.Context) error {
	addr, err := s.dialPath()
	if err != nil {
		return err
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", addr
	cfg.Timeout = 5 * time.Second
	cfg.InterpolateParams = true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("preparing the connection: %w", err)
	}
	s.db = sql.OpenDB(connector)
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	for {
		err := s.db.PingContext(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-s.proc.Done():
			s.closeDB()
			return fmt.Errorf("mysqld exited before accepting connections (%v)", s.proc.Err())
		case <-ctx.Done():
			s.closeDB()
			return fmt.Errorf("not accepting connections: %w (last attempt: %w)", ctx.Err(), err)
		case <-time.After(pollInterval):
		}
	}
}

// WaitExit waits for mysqld to exit on its own (as after SHUTDOWN) and returns its exit error.
func (s *Server) WaitExit(ctx context.Context) error {
	select {
	case <-s.proc.Done():
		s.closeDB()
		return s.proc.Err()
	case <-ctx.Done():
		return fmt.Errorf("waiting for mysqld to exit: %w", context.Cause(ctx))
	}
}

// Shutdown stops mysqld cleanly (SIGTERM), killing it after a timeout, and reports an unclean
// exit as an error.
func (s *Server) Shutdown() error {
	if s.proc.Exited() {
		s.closeDB()
		return s.proc.Err()
	}
	s.closeDB() // before mysqld closes its end of idle connections
	if err := s.proc.Stop(shutdownTimeout); err != nil {
		s.closeDB()
		return errors.New("mysqld did not shut down in time and was killed")
	}
	s.closeDB()
	if err := s.proc.Err(); err != nil {
		return fmt.Errorf("mysqld exited with %w", err)
	}
	return nil
}

// Kill stops mysqld at once; for cleanup after a failure.
func (s *Server) Kill() {
	s.proc.Kill()
	s.closeDB()
}

// Tail returns the last n lines of text.
func Tail(text []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
