package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// Options chooses what runs beside the API server.
type Options struct {
	// ControllerManager also starts kube-controller-manager (garbage collection, Jobs, TTL,
	// EndpointSlices, namespace deletion).
	ControllerManager bool
}

// Env is a running control plane with the CRDs installed.
type Env struct {
	// Config is an admin rest.Config for the API server.
	Config *rest.Config
	// Client is an uncached client with Scheme.
	Client client.Client
	// Scheme has the built-in kinds and this project's API.
	Scheme *runtime.Scheme

	env     *envtest.Environment
	cm      *controllerManager
	workDir string
}

// newScheme has the built-in kinds, this project's API and prometheus-operator's (the operator
// keeps PodMonitors; kit.ClientOptions names the kind). It is built here rather than taken from
// internal/operator so that the packages the operator imports can use this package in their tests.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	utilruntime.Must(monitoringv1.AddToScheme(s))
	return s
}

// Start starts etcd and kube-apiserver, installs the CRDs and, if asked, kube-controller-manager.
// Call Stop when done; TestMain users should call it before os.Exit.
func Start(opts Options) (*Env, error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	e := &Env{Scheme: newScheme()}
	e.env = &envtest.Environment{
		CRDDirectoryPaths:     []string{CRDDir()},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		Scheme:                e.Scheme,
	}
	if e.Config, err = e.env.Start(); err != nil {
		return nil, fmt.Errorf("starting envtest with the binaries in %s: %w", assets, err)
	}
	if e.Client, err = client.New(e.Config, client.Options{Scheme: e.Scheme}); err != nil {
		_ = e.Stop()
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	if opts.ControllerManager {
		if err := e.startControllerManager(assets); err != nil {
			_ = e.Stop()
			return nil, err
		}
	}
	return e, nil
}

func (e *Env) startControllerManager(assets string) error {
	user, err := e.env.AddUser(envtest.User{Name: "kube-controller-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("creating the controller-manager user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("rendering the controller-manager kubeconfig: %w", err)
	}
	if e.workDir, err = os.MkdirTemp("", "kubetest-"); err != nil {
		return fmt.Errorf("creating a work directory: %w", err)
	}
	e.cm, err = startControllerManager(assets, e.workDir, kubeconfig)
	return err
}

// StartT starts an Env for one test and stops it when the test ends.
func StartT(t testing.TB, opts Options) *Env {
	t.Helper()
	e, err := Start(opts)
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	return e
}

// Stop stops kube-controller-manager, the API server and etcd.
func (e *Env) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var firstErr error
	if e.cm != nil {
		firstErr = e.cm.stop(ctx)
		e.cm = nil
	}
	if err := e.env.Stop(); err != nil && firstErr == nil {
		firstErr = fmt.Errorf("stopping envtest: %w", err)
	}
	if e.workDir != "" {
		_ = os.RemoveAll(e.workDir)
	}
	return firstErr
}

// ControllerManagerLog returns the tail of kube-controller-manager's output, for failure reports.
func (e *Env) ControllerManagerLog() string {
	if e.cm == nil {
		return ""
	}
	return tail(e.cm.log.String(), 60)
}

// NewNamespace creates a namespace with a unique name for one test and deletes it afterwards.
func (e *Env) NewNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	t.Cleanup(func() { _ = e.Client.Delete(context.Background(), ns) })
	return ns.Name
}

// EnsureNode registers a Node object (no kubelet behind it) so controllers that look Pods' nodes up,
// such as the EndpointSlice controller, accept Pods scheduled to it.
func (e *Env) EnsureNode(ctx context.Context, name string) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.Client.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Node %s: %w", name, err)
	}
	return nil
}

// AdminKubeconfig returns a kubeconfig of a new user in system:masters.
func (e *Env) AdminKubeconfig() ([]byte, error) {
	user, err := e.env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("creating an admin user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, fmt.Errorf("rendering the kubeconfig: %w", err)
	}
	return kubeconfig, nil
}

// KubeconfigFile writes an admin kubeconfig for the API server into a file that lives as long as
// the test, for code that takes --kubeconfig (the kubectl plugin, the operator binary).
func (e *Env) KubeconfigFile(t testing.TB) string {
	t.Helper()
	kubeconfig, err := e.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// UserKubeconfigFile writes a kubeconfig of a new user called name, in no group but the
// authenticated ones, into a file that lives as long as the test: RBAC grants it nothing until a
// test binds it a role.
func (e *Env) UserKubeconfigFile(t testing.TB, name string) string {
	t.Helper()
	user, err := e.env.AddUser(envtest.User{Name: name}, nil)
	if err != nil {
		t.Fatalf("creating user %s: %v", name, err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatalf("rendering the kubeconfig of %s: %v", name, err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig-"+name)
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
