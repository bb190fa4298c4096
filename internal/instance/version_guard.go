package instance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

// upgradeHistoryFile is the file in which mysqld records the server versions that ran on the
// data directory, appending an entry whenever its own version differs from the last one's; the
// 9.7 server of the test machines writes, on initialization:
//
//	{"file_format":"1","upgrade_history":[{"date":"2026-11-29 09:17:51","version":"9.7.4-2",
//	 "maturity":"LTS","initialize":true,"update_history":[...]}]}
const upgradeHistoryFile = "mysql_upgrade_history"

// terminationLog is where a refusal to start mysqld is written, so that the Pod's status shows
// it: the instance container's termination message file (tests redirect it). Only an existing
// file is written: the kubelet creates it in a container, and a manager run outside one must not
// create a file in /dev.
var terminationLog = corev1.TerminationMessagePathDefault

// errVersionRefused is the error of a data directory the image's mysqld must not start on.
var errVersionRefused = errors.New(mysql.RefusedStartMessage)

// VersionCheck is the outcome of CheckDataDirVersion.
type VersionCheck struct {
	// Recorded is false when the data directory records no version (a layout from before the
	// history file, a history mysqld would recreate): nothing says the start is unsafe, so it is
	// allowed, and mysqld's own checks at start are all there is.
	Recorded bool
	// DataDir and Image are the versions as recorded and as the image's mysqld prints them.
	DataDir, Image string
	// Decision is mysql.DecideVersionChange's, when Recorded.
	Decision mysql.VersionDecision
}

// Allowed says whether mysqld may start on the data directory.
func (c VersionCheck) Allowed() bool { return !c.Recorded || c.Decision.Allow }

// CheckDataDirVersion compares the server version that last ran on dataDir (a path the instance
// manager sees) with the version of mysqld, and decides with mysql.DecideVersionChange whether
// mysqld may start on it. Errors are those of reading the history file or running mysqld
// --version, never a refusal.
func CheckDataDirVersion(ctx context.Context, dataDir string, mysqld MysqldCommand) (VersionCheck, error) {
	recorded, err := DataDirVersion(dataDir)
	if err != nil {
		return VersionCheck{}, err
	}
	if recorded == "" {
		return VersionCheck{}, nil
	}
	image, err := MysqldVersion(ctx, mysqld)
	if err != nil {
		return VersionCheck{}, err
	}
	return VersionCheck{Recorded: true, DataDir: recorded, Image: image,
		Decision: mysql.DecideVersionChange(recorded, image)}, nil
}

// DataDirVersion returns the version of the last entry of dataDir's mysql_upgrade_history: the
// server that last ran on it. It returns "" when the file is absent, is not the JSON mysqld
// writes, or has no entry with a version: mysqld itself recreates a file it cannot read.
func DataDirVersion(dataDir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dataDir, upgradeHistoryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the data directory's version: %w", err)
	}
	var history struct {
		UpgradeHistory []struct {
			Version string `json:"version"`
		} `json:"upgrade_history"`
	}
	if json.Unmarshal(raw, &history) != nil || len(history.UpgradeHistory) == 0 {
		return "", nil
	}
	return strings.TrimSpace(history.UpgradeHistory[len(history.UpgradeHistory)-1].Version), nil
}

// mysqldVersionTimeout bounds mysqld --version, which prints a line and exits.
const mysqldVersionTimeout = 30 * time.Second

// MysqldVersion runs mysqld --version and returns the version it prints after "Ver"
// ("/usr/sbin/mysqld  Ver 9.7.4-2 for Linux on x86_64 ((Debian))" gives "9.7.4-2"); output of
// another shape is returned whole, for the policy to refuse as unreadable.
func MysqldVersion(ctx context.Context, mysqld MysqldCommand) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, mysqldVersionTimeout)
	defer cancel()
	cmd := mysqld("--version")
	out := proc.Output{Keep: 4096}
	cmd.Stdout, cmd.Stderr = &out, &out
	c, err := proc.StartTied(cmd)
	if err != nil {
		return "", fmt.Errorf("running mysqld --version: %w", err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		c.Kill()
		return "", fmt.Errorf("running mysqld --version: %w", ctx.Err())
	}
	if err := c.Wait(); err != nil {
		return "", fmt.Errorf("running mysqld --version: %w: %s", err, out.String())
	}
	text := strings.TrimSpace(out.String())
	fields := strings.Fields(text)
	for i, f := range fields {
		if f == "Ver" && i+1 < len(fields) {
			return fields[i+1], nil
		}
	}
	return text, nil
}

// refuseDowngrade keeps mysqld from starting on a data directory that holds data when the
// image's mysqld is a downgrade MySQL does not support (mysql.DecideVersionChange). A data
// directory being initialized, cloned into or restored holds nothing of another version yet.
// A refusal is written to the termination message and returned, so the manager exits with it.
func (m *manager) refuseDowngrade(ctx context.Context, d BootstrapDecision) error {
	if d.Action != BootstrapNone {
		return nil
	}
	check, err := CheckDataDirVersion(ctx, m.cfg.DataDir, m.cfg.Mysqld())
	if err != nil {
		return err
	}
	if !check.Recorded {
		m.deps.Log.Info("the data directory records no server version; starting mysqld on it")
		return nil
	}
	if check.Allowed() {
		m.deps.Log.Info("server version", "dataDir", check.DataDir, "image", check.Image,
			"rule", check.Decision.Rule.String())
		return nil
	}
	refusal := fmt.Errorf("%w: %s", errVersionRefused, check.Decision.Message)
	m.deps.Log.Error(refusal, "server version refused", "dataDir", check.DataDir, "image", check.Image,
		"rule", check.Decision.Rule.String())
	if err := writeTerminationMessage(terminationLog, refusal.Error()); err != nil {
		m.deps.Log.Error(err, "writing the termination message failed", "path", terminationLog)
	}
	return refusal
}

// writeTerminationMessage writes msg to path if the file exists (see terminationLog).
func writeTerminationMessage(path, msg string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(msg); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
