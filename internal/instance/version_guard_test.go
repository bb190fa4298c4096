package instance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// historyOf is a mysql_upgrade_history with one entry per version, the last one last, shaped
// like the file the real mysqld writes (see TestVersionGuardOnRealMysqld) in the fields the guard
// reads.
func historyOf(versions ...string) string {
	var entries []string
	for i, v := range versions {
		entries = append(entries, fmt.Sprintf(`{"date":"2026-11-29 09:%02d:51","version":%q,"maturity":"LTS","initialize":%v}`, i, v, i == 0))
	}
	return `{"file_format":"1","upgrade_history":[` + strings.Join(entries, ",") + `]}`
}

func TestDataDirVersion(t *testing.T) {
	for _, tc := range []struct {
		rule    string
		history *string // nil: no file
		want    string
	}{
		{"the only entry is the version", ptr.To(historyOf("9.7.4-2")), "9.7.4-2"},
		{"the last entry is the server that last ran", ptr.To(historyOf("8.4.3", "9.7.0", "9.7.4-2")), "9.7.4-2"},
		{"no file (a layout from before it) records nothing", nil, ""},
		{"a file mysqld would recreate records nothing", ptr.To(`{"file_format":"1","upgrade_his`), ""},
		{"an empty history records nothing", ptr.To(`{"file_format":"1","upgrade_history":[]}`), ""},
		{"an unreadable version is returned for the policy to refuse", ptr.To(historyOf("nine")), "nine"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			dir := t.TempDir()
			if tc.history != nil {
				must(t, os.WriteFile(filepath.Join(dir, upgradeHistoryFile), []byte(*tc.history), 0o640))
			}
			if got, err := DataDirVersion(dir); err != nil || got != tc.want {
				t.Errorf("DataDirVersion = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	t.Run("a history that cannot be read is an error, not a permission to start", func(t *testing.T) {
		dir := t.TempDir()
		must(t, os.Mkdir(filepath.Join(dir, upgradeHistoryFile), 0o750))
		if got, err := DataDirVersion(dir); err == nil {
			t.Errorf("DataDirVersion of a directory = %q, want an error", got)
		}
	})
}

// printingMysqld is a MysqldCommand whose --version prints out, as the mysqld of another image
// would; any other use fails.
func printingMysqld(out string) MysqldCommand {
	return func(extra ...string) *exec.Cmd {
		script := `[ "$1" = --version ] || exit 3; printf '%s\n' "$0"`
		return exec.Command("/bin/sh", append([]string{"-c", script, out}, extra...)...)
	}
}

func TestMysqldVersion(t *testing.T) {
	for _, tc := range []struct{ rule, out, want string }{
		{"an Oracle build", "/usr/sbin/mysqld  Ver 8.4.3 for Linux on x86_64 (MySQL Community Server - GPL)", "8.4.3"},
		{"a Debian build", "/usr/sbin/mysqld  Ver 9.7.4-2 for Linux on x86_64 ((Debian))", "9.7.4-2"},
		{"a debug build", "/usr/sbin/mysqld  Ver 9.7.0-debug for Linux on x86_64 (Source distribution)", "9.7.0-debug"},
		{"output of another shape is returned whole", "mysqld, version unknown", "mysqld, version unknown"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got, err := MysqldVersion(t.Context(), printingMysqld(tc.out)); err != nil || got != tc.want {
				t.Errorf("MysqldVersion = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	t.Run("a mysqld that fails is an error", func(t *testing.T) {
		fails := func(extra ...string) *exec.Cmd { return exec.Command("/bin/sh", "-c", "echo no such binary; exit 127") }
		if _, err := MysqldVersion(t.Context(), fails); err == nil || !strings.Contains(err.Error(), "no such binary") {
			t.Errorf("MysqldVersion of a failing command: %v", err)
		}
	})
}

// guardWorld is a manager whose data directory records history and whose image's mysqld prints
// imageOut, with its termination message file redirected.
type guardWorld struct {
	m           *manager
	termination string
}

func newGuardWorld(t *testing.T, history, imageOut string, terminationFile bool) guardWorld {
	t.Helper()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	must(t, os.Mkdir(dataDir, 0o750))
	if history != "" {
		must(t, os.WriteFile(filepath.Join(dataDir, upgradeHistoryFile), []byte(history), 0o640))
	}
	w := guardWorld{termination: filepath.Join(dir, "termination-log")}
	if terminationFile {
		must(t, os.WriteFile(w.termination, nil, 0o644))
	}
	saved := terminationLog
	terminationLog = w.termination
	t.Cleanup(func() { terminationLog = saved })
	cfg := &RunConfig{DataDir: dataDir, RunDir: dir,
		MysqldCommand: []string{"/bin/sh", "-c", `[ "$2" = --version ] || exit 3; printf '%s\n' "$0"`, imageOut}}
	w.m = &manager{cfg: cfg, deps: RunDeps{Log: testr.New(t)}}
	return w
}

func (w guardWorld) message(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(w.termination)
	if errors.Is(err, os.ErrNotExist) {
		return "<none>"
	}
	must(t, err)
	return string(raw)
}

// TestGuardRefusesDowngradeBeforeMysqldStarts: the instance manager's step before mysqld first
// starts, on the versions a user's imageName change gives.
func TestGuardRefusesDowngradeBeforeMysqldStarts(t *testing.T) {
	const image97 = "/usr/sbin/mysqld  Ver 9.7.4-2 for Linux on x86_64 ((Debian))"
	const image84 = "/usr/sbin/mysqld  Ver 8.4.3 for Linux on x86_64 (MySQL Community Server - GPL)"
	existing := BootstrapDecision{Action: BootstrapNone}

	t.Run("a downgrade across series is refused, in the error and the termination message", func(t *testing.T) {
		w := newGuardWorld(t, historyOf("8.4.3", "9.7.0"), image84, true)
		err := w.m.refuseDowngrade(t.Context(), existing)
		if !errors.Is(err, errVersionRefused) {
			t.Fatalf("refuseDowngrade = %v, want a refusal", err)
		}
		want := "refusing to start mysqld: the data directory was last used by MySQL 9.7.0; this image runs 8.4.3: " +
			"MySQL does not support downgrading across release series; set imageName back to a MySQL 9.7 image"
		if err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
		if got := w.message(t); got != want {
			t.Errorf("termination message %q, want %q", got, want)
		}
	})
	t.Run("an unreadable image version is refused", func(t *testing.T) {
		w := newGuardWorld(t, historyOf("9.7.4-2"), "mysqld: cannot start", true)
		err := w.m.refuseDowngrade(t.Context(), existing)
		if !errors.Is(err, errVersionRefused) || !strings.Contains(w.message(t), "cannot read the MySQL version of this image's mysqld") {
			t.Errorf("refuseDowngrade = %v, termination message %q", err, w.message(t))
		}
	})
	t.Run("a refusal without a termination message file still refuses and creates none", func(t *testing.T) {
		w := newGuardWorld(t, historyOf("9.7.0"), image84, false)
		if err := w.m.refuseDowngrade(t.Context(), existing); !errors.Is(err, errVersionRefused) {
			t.Errorf("refuseDowngrade = %v, want a refusal", err)
		}
		if got := w.message(t); got != "<none>" {
			t.Errorf("termination message file created: %q", got)
		}
	})
	for _, tc := range []struct {
		rule, history, image string
		decision             BootstrapDecision
	}{
		{"the same version starts", historyOf("9.7.4-2"), image97, existing},
		{"an upgrade starts", historyOf("8.4.3"), image97, existing},
		{"a downgrade within the LTS series starts", historyOf("9.7.6"), image97, existing},
		{"a data directory recording no version starts", "", image84, existing},
		{"a data directory being initialized is not checked", historyOf("9.7.0"), image84, BootstrapDecision{Action: BootstrapInitialize}},
		{"a data directory being cloned into is not checked", historyOf("9.7.0"), image84, BootstrapDecision{Action: BootstrapClone}},
		{"a data directory being restored is not checked", historyOf("9.7.0"), image84, BootstrapDecision{Action: BootstrapRecover}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			w := newGuardWorld(t, tc.history, tc.image, true)
			if err := w.m.refuseDowngrade(t.Context(), tc.decision); err != nil {
				t.Errorf("refuseDowngrade = %v, want a start", err)
			}
			if got := w.message(t); got != "" {
				t.Errorf("termination message %q written for a start", got)
			}
		})
	}
}

// TestVersionGuardOnRealMysqld: the real mysqld initializes a data directory; the guard reads
// the version it recorded and the version it prints, finds them the same, and refuses once the
// history says a later series ran last.
func TestVersionGuardOnRealMysqld(t *testing.T) {
	rootfs, host, inside := chrootDir(t)
	mysqld := func(extra ...string) *exec.Cmd { return chrootMysqld(rootfs, extra...) }
	initialize := func(extra ...string) *exec.Cmd {
		return chrootMysqld(rootfs, append([]string{"--no-defaults", "--datadir=" + inside + "/data", "--user=root",
			"--innodb-buffer-pool-size=32M", "--performance-schema=OFF", "--log-error=" + inside + "/init.log"}, extra...)...)
	}
	if err := InitializeDataDir(t.Context(), initialize); err != nil {
		log, _ := os.ReadFile(filepath.Join(host, "init.log"))
		t.Fatalf("%v\n%s", err, log)
	}
	dataDir := filepath.Join(host, "data")
	raw, err := os.ReadFile(filepath.Join(dataDir, upgradeHistoryFile))
	must(t, err)
	t.Logf("%s: %s", upgradeHistoryFile, raw)

	image, err := MysqldVersion(t.Context(), mysqld)
	must(t, err)
	v, err := mysql.ParseServerVersion(image)
	if err != nil {
		t.Fatalf("the version mysqld prints: %v", err)
	}
	check, err := CheckDataDirVersion(t.Context(), dataDir, mysqld)
	must(t, err)
	if !check.Recorded || check.DataDir != image || check.Image != image || !check.Allowed() || check.Decision.Rule != mysql.VersionSame {
		t.Errorf("freshly initialized: %+v, want %s recorded and allowed as the same release", check, image)
	}

	// A later series having run last, in mysqld's own format: its last entry, copied with
	// another version.
	later := fmt.Sprintf("%d.%d.0", v.Major+17, v.Minor)
	var history map[string]any
	must(t, json.Unmarshal(raw, &history))
	entries, _ := history["upgrade_history"].([]any)
	if len(entries) == 0 {
		t.Fatalf("no upgrade_history entries in %s", raw)
	}
	last, _ := entries[len(entries)-1].(map[string]any)
	next := map[string]any{}
	for k, val := range last {
		next[k] = val
	}
	next["version"] = later
	delete(next, "initialize")
	history["upgrade_history"] = append(entries, next)
	edited, err := json.Marshal(history)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dataDir, upgradeHistoryFile), edited, 0o640))

	check, err = CheckDataDirVersion(t.Context(), dataDir, mysqld)
	must(t, err)
	if check.Allowed() || check.Decision.Rule != mysql.VersionSeriesDowngrade ||
		!strings.Contains(check.Decision.Message, "last used by MySQL "+later+"; this image runs "+image) {
		t.Errorf("after %s ran last: %+v, want a refusal naming both versions", later, check)
	}
}

// TestRunGuardStartsNoMysqldOnADowngrade: `manager instance run` on a data directory last used by
// a later series renders my.cnf, then exits with the refusal, in its error and its termination
// message, without ever starting mysqld.
func TestRunGuardStartsNoMysqldOnADowngrade(t *testing.T) {
	dir := t.TempDir()
	dataDir, started := filepath.Join(dir, "data"), filepath.Join(dir, "mysqld-started")
	must(t, os.MkdirAll(dataDir, 0o750))
	must(t, os.WriteFile(filepath.Join(dataDir, "mysql.ibd"), nil, 0o640)) // HasData
	must(t, os.WriteFile(filepath.Join(dataDir, upgradeHistoryFile), []byte(historyOf("8.4.3", "9.7.0")), 0o640))
	termination := filepath.Join(dir, "termination-log")
	must(t, os.WriteFile(termination, nil, 0o644))
	saved := terminationLog
	terminationLog = termination
	t.Cleanup(func() { terminationLog = saved })
	// The mysqld of an 8.4 image: it validates my.cnf and prints its version; any other use is a
	// start, which it records.
	script := `for a in "$@"; do case "$a" in
		--validate-config) exit 0;;
		--version) echo "/usr/sbin/mysqld  Ver 8.4.3 for Linux on x86_64 (MySQL Community Server - GPL)"; exit 0;;
	esac; done; touch "$0"; exit 1`
	cluster := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
		Status: v1alpha1.ClusterStatus{CurrentPrimary: "db-1", TargetPrimary: "db-1"}}
	k8s := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(cluster).Build()
	cfg := &RunConfig{Instance: "db-1", Namespace: "ns", Cluster: "db", MysqldCommand: []string{"/bin/sh", "-c", script, started},
		DataDir: dataDir, RunDir: filepath.Join(dir, "run"), ServerTLSDir: filepath.Join(dir, "tls"),
		ClientTLSDir: filepath.Join(dir, "client"), Port: 3306, ReportHost: "db-1.ns.svc", ReconcileInterval: time.Second}
	writeTestPasswords(t, dir)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	err := Run(ctx, cfg, RunDeps{Client: k8s, Factory: mysql.NewFactory(), Passwords: FilePasswords{Dir: dir},
		Clock: clock.RealClock{}, Log: testr.New(t)})
	if !errors.Is(err, errVersionRefused) || !strings.Contains(err.Error(), "last used by MySQL 9.7.0; this image runs 8.4.3") {
		t.Errorf("Run = %v, want the refusal", err)
	}
	if got, rerr := os.ReadFile(termination); rerr != nil || err == nil || string(got) != err.Error() {
		t.Errorf("termination message %q (%v), want the error %v", got, rerr, err)
	}
	if _, err := os.Stat(started); err == nil {
		t.Error("mysqld was started on the data directory")
	}
	if _, err := os.Stat(cfg.myCnfPath()); err != nil {
		t.Errorf("my.cnf not rendered: %v", err)
	}
}
