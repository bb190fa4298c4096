package mysqldtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// EnvRootFS names the environment variable that points at the MySQL root filesystem.
const EnvRootFS = "CNM_MYSQL_ROOTFS"

const (
	mysqldPath = "/usr/sbin/mysqld"
	// serversDir holds one directory per server, as seen inside the chroot.
	serversDir = "/tmp/cnm-test"
	// templatesDir holds initialized data directories, as seen inside the chroot.
	templatesDir = "/tmp/cnm-template"
)

// RootFS returns the MySQL root filesystem, failing with a hint on how to build it when it is
// missing, or when the process cannot chroot into it.
func RootFS() (string, error) {
	dir := os.Getenv(EnvRootFS)
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("locating the MySQL root filesystem (set %s): %w", EnvRootFS, err)
		}
		dir = filepath.Join(cache, "cloudnative-mysql", "mysql-rootfs", "v1")
	}
	if _, err := os.Stat(filepath.Join(dir, mysqldPath)); err != nil {
		return "", fmt.Errorf("no MySQL root filesystem at %s (set %s, or build it with "+
			"`make test` or `bash hack/substrate.sh mysql`): %w", dir, EnvRootFS, err)
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("mysqld runs chrooted into %s, which needs root (running as uid %d)",
			dir, os.Geteuid())
	}
	return dir, nil
}

var sweepOnce sync.Once

// newServerDir creates a fresh directory for one server under <rootfs>/tmp/cnm-test, named after
// this process so that the directories of dead test binaries can be recognized and removed.
func newServerDir(rootfs string) (string, error) {
	parent := filepath.Join(rootfs, serversDir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", parent, err)
	}
	sweepOnce.Do(func() { sweepStale(parent) })
	dir, err := os.MkdirTemp(parent, strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("creating a server directory: %w", err)
	}
	return dir, nil
}

// sweepStale removes server directories left behind by test processes that no longer exist.
func sweepStale(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		pidText, _, ok := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid == os.Getpid() {
			continue
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// inChroot translates a host path below rootfs into the path seen inside the chroot.
func inChroot(rootfs, hostPath string) string {
	rel, err := filepath.Rel(rootfs, hostPath)
	if err != nil || strings.HasPrefix(rel, "..") {
		return hostPath
	}
	return "/" + rel
}
