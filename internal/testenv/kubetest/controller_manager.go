package kubetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
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
	child *proc.Child
	log   *proc.Output
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
	log := &proc.Output{}
	cmd.Stdout, cmd.Stderr = log, log
	// Tied to the test binary (see package proc): it lives no longer than the tests.
	child, err := proc.StartTied(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting kube-controller-manager: %w", err)
	}
	go func() {
		fmt.Fprintf(log, "kube-controller-manager exited: %v\n", child.Wait())
	}()
	// It exits at once on a bad flag or an unreachable API server; give it a moment to show that.
	select {
	case <-child.Done():
		return nil, fmt.Errorf("kube-controller-manager exited at start (%v):\n%s", child.Err(), tail(log.String(), 40))
	case <-time.After(500 * time.Millisecond):
	}
	return &controllerManager{child: child, log: log}, nil
}

// stop terminates the process and waits for it.
func (c *controllerManager) stop(ctx context.Context) error {
	_ = c.child.Signal(syscall.SIGTERM)
	select {
	case <-c.child.Done():
		return nil
	case <-ctx.Done():
		c.child.Kill()
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
