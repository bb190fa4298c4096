package helmtest

import (
	"fmt"
	"os"
	"path/filepath"
)

// EnvBinary names the environment variable that points at the helm binary.
const EnvBinary = "CNM_HELM"

// Version is the Helm release hack/substrate.sh builds.
const Version = "v3.22.0"

// Binary returns the helm binary, failing with a hint on how to build it when it is missing.
func Binary() (string, error) {
	path := os.Getenv(EnvBinary)
	if path == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("locating helm (set %s): %w", EnvBinary, err)
		}
		path = filepath.Join(cache, "cloudnative-mysql", "bin", "helm-"+Version, "helm")
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("no helm at %s (set %s, or build it with `make test` or `bash hack/substrate.sh helm`): %w",
			path, EnvBinary, err)
	}
	if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("helm at %s is not an executable file", path)
	}
	return path, nil
}

// Env is the environment for a helm command whose configuration, cache and data live under dir,
// so that a test neither reads nor writes the user's.
func Env(dir string) []string {
	return append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(dir, "config"),
		"HELM_CACHE_HOME="+filepath.Join(dir, "cache"),
		"HELM_DATA_HOME="+filepath.Join(dir, "data"))
}
