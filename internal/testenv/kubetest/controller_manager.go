package kubetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// controllerManagerControllers are the kube-controller-manager controllers the tests rely on.
var controllerManagerControllers = []string{
	"garbage-collector-controller",
	"job-controller",
	"ttl-after-finished-controller",
	"endpointslice-controller",
	"namespace-controller",
	"persistentvolumeclaim-protection-controller",
}

// controllerManager is a running kube-controller-manager process.
type controllerManager struct {
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan error
}

// syncBuffer is a bytes.Buffer safe for the process's writers and a concurrent reader.
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

// startControllerManager runs kube-controller-manager against the API server described by
// kubeconfig, with its secure port off and leader election disabled.
func startControllerManager(assets, workDir string, kubeconfig []byte) (*controllerManager, error) {
	path := filepath.Join(workDir, "kcm.kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("writing the controller-manager kubeconfig: %w", err)
	}
	cmd := exec.Command(filepath.Join(assets, "kube-controller-manager"),
		"--kubeconfig="+path,
		"--controllers="+strings.Join(controllerManagerControllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--concurrent-gc-syncs=10",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--v=1",
	)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cm := &controllerManager{cmd: cmd, log: log, done: make(chan error, 1)}
	// Pdeathsig fires when the OS thread that started the child exits, and the Go runtime ends
	// threads whose locked goroutine returns: start and wait on one locked thread, so the process
	// lives exactly as long as the test binary.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("starting kube-controller-manager: %w", err)
			return
		}
		started <- nil
		err := cmd.Wait()
		fmt.Fprintf(log, "kube-controller-manager exited: %v\n", err)
		cm.done <- err
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	// It exits at once on a bad flag or an unreachable API server; give it a moment to show that.
	select {
	case err := <-cm.done:
		return nil, fmt.Errorf("kube-controller-manager exited at start (%v):\n%s", err, tail(log.String(), 40))
	case <-time.After(500 * time.Millisecond):
	}
	return cm, nil
}

// stop terminates the process and waits for it.
func (c *controllerManager) stop(ctx context.Context) error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("kube-controller-manager did not stop in time: %w", ctx.Err())
	}
}

func tail(s string, lines int) string {
	parts := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}
