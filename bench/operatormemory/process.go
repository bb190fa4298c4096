package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// managerProcess is one `manager controller` under measurement.
type managerProcess struct {
	label   string
	cmd     *exec.Cmd
	metrics string
	out     *syncBuffer
	done    chan error
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startManager runs path as `manager controller` against kubeconfig, without leader election,
// metrics and probes on the loopback, and waits until it is ready.
func startManager(ctx context.Context, label, path, kubeconfig, dir string) (*managerProcess, error) {
	metrics, err := freeAddr()
	if err != nil {
		return nil, err
	}
	probes, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p := &managerProcess{label: label, metrics: metrics, out: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(path, "controller", "--kubeconfig", kubeconfig, "--leader-elect=false",
		"--metrics-bind-address="+metrics, "--health-probe-bind-address="+probes)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Env = append(os.Environ(), "OPERATOR_IMAGE_NAME=operator:bench")
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	deadline := time.Now().Add(time.Minute)
	for {
		if err := p.alive(); err != nil {
			return nil, fmt.Errorf("manager %s: %w\n%s", label, err, p.tail())
		}
		if code, _ := get(ctx, "http://"+probes+"/readyz"); code == http.StatusOK {
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("manager %s not ready within a minute\n%s", label, p.tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (p *managerProcess) alive() error {
	select {
	case err := <-p.done:
		p.done <- err
		return fmt.Errorf("exited: %v", err)
	default:
		return nil
	}
}

func (p *managerProcess) stop() {
	if p.alive() != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *managerProcess) tail() string {
	lines := strings.Split(strings.TrimSpace(p.out.String()), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

type sample struct{ rss, heap int64 }

func measureAll(ctx context.Context, procs []*managerProcess) []sample {
	out := make([]sample, len(procs))
	for i, p := range procs {
		out[i] = p.measure(ctx)
	}
	return out
}

// measure reads VmRSS from /proc and the Go heap in use from the metrics endpoint (-1 when the
// endpoint does not answer in plain HTTP).
func (p *managerProcess) measure(ctx context.Context) sample {
	s := sample{rss: -1, heap: -1}
	if f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				s.rss = kb << 10
			}
		}
		f.Close()
	}
	if code, body := get(ctx, "http://"+p.metrics+"/metrics"); code == http.StatusOK {
		for _, line := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(line, "go_memstats_heap_inuse_bytes "); ok {
				f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
				s.heap = int64(f)
			}
		}
	}
	return s
}

func get(ctx context.Context, url string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
