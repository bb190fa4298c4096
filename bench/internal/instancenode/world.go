package instancenode

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// ClusterName is the Cluster every World holds; its instances are db-1, db-2, ...
const ClusterName = "db"

// World is what a benchmark started, to be stopped at the end with Teardown.
type World struct {
	Env                          *kubetest.Env
	Bin, RootFS, Base, Namespace string
	Kubeconfig                   string
	PKI                          PKI
	Nodes                        []*Node
	firstHost                    int
}

// Setup builds the manager, starts the API server and creates the Cluster "db" with spec in a
// new namespace, with db-1 as its target primary. A World returned with an error must still be
// torn down.
func Setup(ctx context.Context, spec v1alpha1.ClusterSpec) (*World, error) {
	rootfs, err := mysqldtest.RootFS()
	if err != nil {
		return nil, err
	}
	w := &World{RootFS: rootfs, firstHost: 20 + os.Getpid()%200}
	if w.Base, err = os.MkdirTemp(filepath.Join(rootfs, "tmp"), "cnm-bench-"); err != nil {
		return nil, err
	}
	w.Bin = filepath.Join(w.Base, "manager")
	if out, err := exec.Command("go", "build", "-o", w.Bin, "./cmd/manager").CombinedOutput(); err != nil {
		return w, fmt.Errorf("building the manager (run from the repository root): %w\n%s", err, out)
	}
	if w.Env, err = kubetest.Start(kubetest.Options{}); err != nil {
		return w, err
	}
	kc, err := w.Env.AdminKubeconfig()
	if err != nil {
		return w, err
	}
	w.Kubeconfig = filepath.Join(w.Base, "kubeconfig")
	if err := os.WriteFile(w.Kubeconfig, kc, 0o600); err != nil {
		return w, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}
	if err := w.Env.Client.Create(ctx, ns); err != nil {
		return w, err
	}
	w.Namespace = ns.Name
	if w.PKI, err = newPKI(); err != nil {
		return w, err
	}
	return w, w.createCluster(ctx, spec)
}

func (w *World) createCluster(ctx context.Context, spec v1alpha1.ClusterSpec) error {
	c := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: ClusterName, Namespace: w.Namespace}, Spec: spec}
	if err := w.Env.Client.Create(ctx, c); err != nil {
		return fmt.Errorf("creating the Cluster: %w", err)
	}
	now := metav1.Now()
	c.Status.TargetPrimary, c.Status.TargetPrimaryTimestamp = ClusterName+"-1", &now
	return w.Env.Client.Status().Update(ctx, c)
}

// AddNode prepares one more instance manager and starts it, and restarts none of the others:
// those not started yet (none, unless a start failed) start with it.
func (w *World) AddNode(name string, opts Options) (*Node, error) {
	host := net.IPv4(127, 0, 0, byte(w.firstHost+len(w.Nodes)+1)).String()
	n, err := newNode(w.PKI, w.Base, name, host, opts)
	if err != nil {
		return nil, err
	}
	w.Nodes = append(w.Nodes, n)
	for _, other := range w.Nodes {
		if other.Manager == nil {
			if err := other.start(w.Bin, w.RootFS, w.Kubeconfig, w.Namespace, w.Nodes); err != nil {
				return nil, err
			}
		}
	}
	return n, nil
}

// Teardown stops every instance manager (and so mysqld), the API server, and removes the files.
func (w *World) Teardown() {
	for _, n := range w.Nodes {
		n.Stop()
	}
	if w.Env != nil {
		_ = w.Env.Stop()
	}
	_ = os.RemoveAll(w.Base)
}
