package chaos

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// CacheDir is where hack/ keeps its state: $CNM_CACHE, else $XDG_CACHE_HOME/cloudnative-mysql,
// else ~/.cache/cloudnative-mysql (hack/lib.sh).
func CacheDir() string {
	if d := os.Getenv("CNM_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "cloudnative-mysql")
}

// LocalEnv is the Env of the local node started by hack/localcluster.sh: its admin kubeconfig,
// its kubectl, its containerd socket and its network namespace.
func LocalEnv(kubeconfig, kubectl, ctrSocket string) (*Env, error) {
	cache := CacheDir()
	if kubeconfig == "" {
		kubeconfig = filepath.Join(cache, "localcluster", "kubeconfig")
	}
	if kubectl == "" {
		kubectl = filepath.Join(cache, "k8s", "v1.34.10", "kubectl")
	}
	if ctrSocket == "" {
		ctrSocket = filepath.Join(cache, "localcluster", "containerd", "containerd.sock")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	s := scheme.Scheme
	if err := mysqlv1.AddToScheme(s); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(NodeNetns); err != nil {
		return nil, fmt.Errorf("the local node's network namespace: %w (is hack/localcluster.sh up?)", err)
	}
	return &Env{Client: c, Kubectl: kubectl, Kubeconfig: kubeconfig, CtrSocket: ctrSocket, Dialer: &NetnsDialer{Path: NodeNetns},
		Operator: LocalOperator}, nil
}
