package mysqldtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// initSQL runs once, when the template data directory is initialized: it makes root reachable
// over TCP from 127.0.0.1 (with --skip-name-resolve, root@localhost only matches the socket).
// GRANT ALL leaves out AUDIT_ABORT_EXEMPT and FIREWALL_EXEMPT, which root@localhost has; granting
// them here fails the bootstrap with a syntax error, and no test needs them.
const initSQL = `CREATE USER 'root'@'127.0.0.1' IDENTIFIED BY '';
GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
GRANT PROXY ON ''@'' TO 'root'@'127.0.0.1' WITH GRANT OPTION;
`

// memoryArgs keep a server small; they apply to initialization and to every start.
var memoryArgs = []string{
	"--innodb-buffer-pool-size=32M",
	"--innodb-log-buffer-size=1M",
	"--innodb-redo-log-capacity=32M", // 8M makes initialization stall on redo space,
	"--performance-schema=OFF",
}

var templateMu sync.Mutex

// templateDataDir returns the host path of an initialized data directory under
// <rootfs>/tmp/cnm-template, initializing it on first use. The directory is keyed by the
// initialization options and published with a rename, so concurrent test binaries share it.
func templateDataDir(ctx context.Context, rootfs string) (string, error) {
	templateMu.Lock()
	defer templateMu.Unlock()
	sum := sha256.Sum256([]byte(strings.Join(append([]string{initSQL}, memoryArgs...), "\n")))
	parent := filepath.Join(rootfs, templatesDir)
	final := filepath.Join(parent, hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(final, "data")); err == nil {
		return filepath.Join(final, "data"), nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", parent, err)
	}
	sweepStale(parent)
	tmp, err := os.MkdirTemp(parent, strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("creating a template directory: %w", err)
	}
	defer os.RemoveAll(tmp) // gone already once renamed
	if err := initialize(ctx, rootfs, tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(filepath.Join(final, "data")); statErr != nil {
			return "", fmt.Errorf("publishing the template data directory: %w", err)
		}
	}
	removeOtherTemplates(parent, filepath.Base(final))
	return filepath.Join(final, "data"), nil
}

// removeOtherTemplates removes the templates made with other initialization options: only the
// in-progress ones are named <pid>-<random>.
func removeOtherTemplates(parent, keep string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() != keep && !strings.Contains(e.Name(), "-") {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// initialize runs mysqld --initialize-insecure into dir/data.
func initialize(ctx context.Context, rootfs, dir string) error {
	chrootDir := inChroot(rootfs, dir)
	if err := os.WriteFile(filepath.Join(dir, "init.sql"), []byte(initSQL), 0o600); err != nil {
		return fmt.Errorf("writing init.sql: %w", err)
	}
	args := append([]string{
		"--no-defaults",
		"--user=root",
		"--datadir=" + chrootDir + "/data",
		"--init-file=" + chrootDir + "/init.sql",
		"--log-error=" + chrootDir + "/init.log", // --plugin-load-add is ignored here
	}, memoryArgs...)
	args = append(args, "--initialize-insecure")
	var out bytes.Buffer
	err := runProcess(ctx, rootfs, args, &out)
	if err == nil {
		return nil
	}
	log, _ := os.ReadFile(filepath.Join(dir, "init.log"))
	return fmt.Errorf("initializing a data directory: %w\n%s%s", err, out.Bytes(), tail(log, 30))
}

// copyDataDir copies the template into dst, leaving out auto.cnf (so that mysqld generates a
// fresh server_uuid) and the keys and certificates generated at initialization.
func copyDataDir(src, dst string) error {
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm())
		case rel == "auto.cnf" || (filepath.Dir(rel) == "." && strings.HasSuffix(rel, ".pem")):
			return nil
		default:
			return copyFile(path, target, info.Mode().Perm())
		}
	})
	if err != nil {
		return fmt.Errorf("copying the template data directory: %w", err)
	}
	return nil
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// tail returns the last n lines of text.
func tail(text []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
