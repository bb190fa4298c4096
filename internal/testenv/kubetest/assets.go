package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// k8sVersion must match K8S_VERSION in hack/lib.sh.
const k8sVersion = "v1.34.10"

// AssetsDir returns the directory holding kube-apiserver, etcd, kubectl and
// kube-controller-manager: $KUBEBUILDER_ASSETS, else the substrate cache.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(cacheDir(), "k8s", k8sVersion)
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run 'make test' or 'bash hack/substrate.sh kube' to build the control plane: %w", bin, dir, err)
		}
	}
	return dir, nil
}

// cacheDir mirrors CNM_CACHE in hack/lib.sh.
func cacheDir() string {
	if d := os.Getenv("CNM_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "cloudnative-mysql")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "cloudnative-mysql")
}

// RepoRoot returns the repository root, found from this file's location at build time.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// CRDDir is where controller-gen writes the CRDs.
func CRDDir() string {
	return filepath.Join(RepoRoot(), "config", "crd", "bases")
}
