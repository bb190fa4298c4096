package s3test

import (
	"fmt"
	"os"
	"path/filepath"
)

// EnvBinary names the environment variable that points at the versitygw binary.
const EnvBinary = "CNM_VERSITYGW"

// Binary returns the versitygw binary, failing with a hint on how to build it when it is missing.
func Binary() (string, error) {
	path := os.Getenv(EnvBinary)
	if path == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("locating versitygw (set %s): %w", EnvBinary, err)
		}
		path = filepath.Join(cache, "cloudnative-mysql", "bin", "versitygw-v1.8.0", "versitygw")
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("no versitygw at %s (set %s, or build it with `make test` or "+
			"`bash hack/substrate.sh versitygw`): %w", path, EnvBinary, err)
	}
	if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("versitygw at %s is not an executable file", path)
	}
	return path, nil
}
