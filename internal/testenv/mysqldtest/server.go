package mysqldtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

const (
	defaultStartTimeout = 60 * time.Second
	stopTimeout         = 30 * time.Second
	portAttempts        = 5
)

var errPortInUse = errors.New("port already in use")

// Config configures one server; the zero value is usable.
type Config struct {
	RootFS       string        // the MySQL root filesystem; RootFS() when empty
	CA           *CA           // signs the server and client certificates; a new CA when nil
	ServerID     int           // server_id; unique within the test binary when zero
	ExtraArgs    []string      // appended to the mysqld command line, overriding the defaults
	StartTimeout time.Duration // how long to wait for connections; 60 s when zero
}

// Server is one mysqld. Its exported fields do not change after StartServer.
type Server struct {
	Host     string   // loopback address mysqld listens on, 127.0.0.x
	Port     int      // TCP port
	ServerID int      // server_id
	Dir      string   // host path of the server's directory: data/, tls/, error.log, ...
	DataDir  string   // host path of the data directory
	TLS      TLSFiles // certificates and keys, host paths and PEM

	rootfs       string
	extraArgs    []string
	startTimeout time.Duration
	tlsName      string

	mu     sync.Mutex
	proc   *proc.Child
	closed bool
}

// StartServer creates a data directory from the initialized template and starts mysqld on it,
// returning once it accepts connections. Close releases everything.
func StartServer(ctx context.Context, cfg Config) (*Server, error) {
	s, err := newServer(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := s.launch(ctx, true); err != nil {
		s.removeFiles()
		return nil, err
	}
	return s, nil
}

// newServer prepares the directory, TLS material and data directory of a server.
func newServer(ctx context.Context, cfg Config) (*Server, error) {
	var err error
	if cfg.RootFS == "" {
		if cfg.RootFS, err = RootFS(); err != nil {
			return nil, err
		}
	}
	if cfg.CA == nil {
		if cfg.CA, err = NewCA(); err != nil {
			return nil, err
		}
	}
	if cfg.ServerID == 0 {
		cfg.ServerID = nextServerID()
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = defaultStartTimeout
	}
	template, err := templateDataDir(ctx, cfg.RootFS)
	if err != nil {
		return nil, err
	}
	dir, err := newServerDir(cfg.RootFS)
	if err != nil {
		return nil, err
	}
	s := &Server{
		Host: nextHost(), ServerID: cfg.ServerID, Dir: dir, DataDir: filepath.Join(dir, "data"),
		rootfs: cfg.RootFS, extraArgs: cfg.ExtraArgs, startTimeout: cfg.StartTimeout,
	}
	if err := s.prepare(cfg.CA, template); err != nil {
		s.removeFiles()
		return nil, err
	}
	return s, nil
}

func (s *Server) prepare(ca *CA, template string) error {
	var err error
	if s.TLS, err = writeTLSFiles(ca, filepath.Join(s.Dir, "tls"), s.Host); err != nil {
		return err
	}
	if err := copyDataDir(template, s.DataDir); err != nil {
		return err
	}
	return s.registerTLS()
}

// launch starts mysqld and waits for it to accept connections. With freshPort, it picks a free
// port first, and picks another one when mysqld finds it taken by then.
func (s *Server) launch(ctx context.Context, freshPort bool) error {
	for attempt := 1; ; attempt++ {
		if freshPort {
			port, err := freePort(s.Host)
			if err != nil {
				return err
			}
			s.Port = port
		}
		err := s.startOnce(ctx)
		if err == nil || !freshPort || !errors.Is(err, errPortInUse) || attempt == portAttempts {
			return err
		}
	}
}

func (s *Server) startOnce(ctx context.Context) error {
	logStart := fileSize(s.ErrorLogPath())
	console, err := os.OpenFile(filepath.Join(s.Dir, "console.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening the console log: %w", err)
	}
	defer console.Close() // the child holds its own descriptor
	p, err := startProcess(s.rootfs, s.startArgs(), console)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	err = s.waitReady(ctx, p)
	if err == nil {
		return nil
	}
	_ = killProcess(p)
	log := s.errorLogSince(logStart)
	if strings.Contains(log, "Bind on TCP/IP port") {
		err = fmt.Errorf("%w: %w", errPortInUse, err)
	}
	return fmt.Errorf("mysqld %s:%d: %w\nerror log (tail):\n%s", s.Host, s.Port, err, tail([]byte(log), 30))
}

// Addr returns host:port.
func (s *Server) Addr() string { return fmt.Sprintf("%s:%d", s.Host, s.Port) }

// InChroot translates a host path inside the root filesystem into the path mysqld sees.
func (s *Server) InChroot(hostPath string) string { return inChroot(s.rootfs, hostPath) }

// ErrorLogPath returns the host path of mysqld's error log; it accumulates over restarts.
func (s *Server) ErrorLogPath() string { return filepath.Join(s.Dir, "error.log") }

// ErrorLog returns the content of the error log.
func (s *Server) ErrorLog() (string, error) {
	b, err := os.ReadFile(s.ErrorLogPath())
	if err != nil {
		return "", fmt.Errorf("reading the error log: %w", err)
	}
	return string(b), nil
}

func (s *Server) errorLogSince(offset int64) string {
	b, _ := os.ReadFile(s.ErrorLogPath())
	if offset > int64(len(b)) {
		offset = 0
	}
	return string(b[offset:])
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

func (s *Server) removeFiles() {
	s.deregisterTLS()
	_ = os.RemoveAll(s.Dir)
}
