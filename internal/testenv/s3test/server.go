package s3test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

const (
	// Region is the region versitygw is started with.
	Region = "us-east-1"

	startTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
	pollInterval = 20 * time.Millisecond
	portAttempts = 5
	healthPath   = "/health"
)

var errPortInUse = errors.New("port already in use")

// Server is one versitygw. Its exported fields do not change.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	Addr      string // 127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Region    string
	Bucket    string // created by StartServer
	Dir       string // the posix backend: one subdirectory per bucket

	proc      *proc.Child
	output    *proc.Output
	closeOnce sync.Once
	closeErr  error
}

// Start starts versitygw on a fresh temporary directory and registers its Close with t.Cleanup.
// It fails the test if the server does not start.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := StartServer(t.Context(), t.TempDir())
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("s3test: %v", err)
		}
	})
	t.Logf("versitygw on %s, bucket %s, directory %s", s.Endpoint, s.Bucket, s.Dir)
	return s
}

// StartServer starts versitygw with dir as its posix backend, waits until it serves requests and
// creates the bucket. Close stops it; dir is left to the caller.
func StartServer(ctx context.Context, dir string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	s := &Server{
		AccessKey: rand.Text()[:20],
		SecretKey: rand.Text() + rand.Text()[:14],
		Region:    Region,
		Bucket:    "cnm-test-" + strings.ToLower(rand.Text()[:8]),
		Dir:       dir,
	}
	for attempt := 1; ; attempt++ {
		err = s.startOnce(ctx, bin)
		if err == nil || !errors.Is(err, errPortInUse) || attempt == portAttempts {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if err := s.Client().MakeBucket(ctx, s.Bucket, makeBucketOptions(s.Region)); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("creating bucket %s: %w", s.Bucket, err)
	}
	return s, nil
}

func (s *Server) startOnce(ctx context.Context, bin string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.Endpoint = "http://" + s.Addr
	cmd := exec.Command(bin, "--port", s.Addr, "--region", s.Region, "--health", healthPath,
		"--quiet", "posix", s.Dir)
	// The keys go through the environment, not the command line that ps shows.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "ROOT_ACCESS_KEY_ID=" + s.AccessKey,
		"ROOT_SECRET_ACCESS_KEY=" + s.SecretKey}
	p, output, err := startProcess(cmd)
	if err != nil {
		return err
	}
	s.proc, s.output = p, output
	if err := s.waitReady(ctx); err != nil {
		_ = stopProcess(p, stopTimeout)
		out := output.String()
		if strings.Contains(out, "address already in use") {
			err = fmt.Errorf("%w: %w", errPortInUse, err)
		}
		return fmt.Errorf("versitygw on %s: %w\noutput:\n%s", s.Addr, err, out)
	}
	return nil
}

// waitReady polls the health endpoint until it answers 200, the start timeout passes or the
// process exits.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var lastErr error
	for {
		resp, err := client.Get(s.Endpoint + healthPath)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("health check answered %s", resp.Status)
		}
		lastErr = err
		select {
		case <-s.proc.Done():
			return fmt.Errorf("exited before serving requests (%v)", s.proc.Err())
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %w (last attempt: %w)", startTimeout, ctx.Err(), lastErr)
		case <-ticker.C:
		}
	}
}

// Output returns what versitygw printed (with --quiet, no request log).
func (s *Server) Output() string { return s.output.String() }

// PID returns the process id of versitygw.
func (s *Server) PID() int { return s.proc.Pid() }

// Running reports whether versitygw is still running.
func (s *Server) Running() bool { return !s.proc.Exited() }

// Close stops versitygw (SIGTERM, then SIGKILL after 10 s) and waits for it to be gone. It is
// safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if err := stopProcess(s.proc, stopTimeout); err != nil {
			s.closeErr = fmt.Errorf("stopping versitygw on %s: %w", s.Addr, err)
		}
	})
	return s.closeErr
}

// freePort returns a TCP port that is free on 127.0.0.1 right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
