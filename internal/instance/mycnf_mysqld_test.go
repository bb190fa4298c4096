package instance

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// chrootDir makes a scratch directory inside the MySQL root filesystem and returns its host path
// and the path mysqld sees.
func chrootDir(t *testing.T) (rootfs, host, inside string) {
	t.Helper()
	rootfs, err := mysqldtest.RootFS()
	if err != nil {
		t.Fatalf("MySQL root filesystem: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(rootfs, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	host, err = os.MkdirTemp(filepath.Join(rootfs, "tmp"), "cnm-instance-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(host) })
	return rootfs, host, strings.TrimPrefix(host, rootfs)
}

// chrootMysqld prepares mysqld with args, chrooted into rootfs; start it with package proc, which
// ties it to the test binary.
func chrootMysqld(rootfs string, args ...string) *exec.Cmd {
	cmd := exec.Command("/usr/sbin/mysqld", args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "TZ=UTC"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs}
	return cmd
}

// TestMyCnfReadByMysqld has the real mysqld read a rendered file and print the values it takes.
func TestMyCnfReadByMysqld(t *testing.T) {
	rootfs, host, inside := chrootDir(t)
	in := baseMyCnfInput()
	in.DataDir, in.RunDir = inside+"/data", inside
	in.Parameters = map[string]string{
		"max_connections": "77", "init_connect": `SET @a = '#x; \ y'`, "secure_file_priv": "",
		"server_id": "99", "skip-log-bin": "", "loose-super-read-only": "OFF",
	}
	cnf, err := RenderMyCnf(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(cnf.Refused) != 3 {
		t.Errorf("refused %+v, want server_id, skip-log-bin and loose-super-read-only", cnf.Refused)
	}
	if err := os.WriteFile(filepath.Join(host, "my.cnf"), []byte(cnf.Text), 0o644); err != nil {
		t.Fatal(err)
	}
	defaults := "--defaults-file=" + inside + "/my.cnf"
	var validation bytes.Buffer
	validate := chrootMysqld(rootfs, defaults, "--validate-config")
	validate.Stdout, validate.Stderr = &validation, &validation
	if err := proc.Run(validate); err != nil {
		t.Fatalf("mysqld --validate-config: %v\n%s\n%s", err, validation.String(), cnf.Text)
	}
	var help bytes.Buffer
	helpCmd := chrootMysqld(rootfs, defaults, "--help", "--verbose")
	helpCmd.Stdout = &help
	if err := proc.Run(helpCmd); err != nil {
		t.Fatalf("mysqld --help --verbose: %v", err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(help.String(), "\n") {
		if f := strings.Fields(line); len(f) >= 1 {
			got[f[0]] = strings.TrimSpace(strings.TrimPrefix(line, f[0]))
		}
	}
	for key, want := range map[string]string{
		"server-id": "3", "gtid-mode": "ON", "enforce-gtid-consistency": "ON", "log-bin": "binlog",
		"super-read-only": "TRUE", "read-only": "TRUE", "skip-replica-start": "TRUE", "sync-binlog": "1",
		"innodb-flush-log-at-trx-commit": "1", "ssl-ca": "/tls/ca.crt", "report-host": in.ReportHost,
		"max-connections": "77", "init-connect": `SET @a = '#x; \ y'`, "secure-file-priv": "",
		"relay-log-recovery": "FALSE", "skip-name-resolve": "TRUE", "log-replica-updates": "TRUE",
		"require-secure-transport": "TRUE", "persisted-globals-load": "FALSE", "mysqlx": "OFF",
	} {
		if got[key] != want {
			t.Errorf("mysqld reads %s = %q, want %q", key, got[key], want)
		}
	}
}

// TestMyCnfRequireSecureTransportOverride: require_secure_transport is on unless the user's
// parameter turns it off, whichever way the key is spelled; mysqld reads the user's value.
func TestMyCnfRequireSecureTransportOverride(t *testing.T) {
	rootfs, host, inside := chrootDir(t)
	for _, tc := range []struct {
		params map[string]string
		want   string
	}{
		{nil, "TRUE"},
		{map[string]string{"require_secure_transport": "OFF"}, "FALSE"},
		{map[string]string{"Require-Secure-Transport": "0"}, "FALSE"},
	} {
		in := baseMyCnfInput()
		in.DataDir, in.RunDir, in.Parameters = inside+"/data", inside, tc.params
		cnf, err := RenderMyCnf(in)
		if err != nil || len(cnf.Refused) != 0 {
			t.Fatalf("RenderMyCnf: %v, refused %v", err, cnf.Refused)
		}
		if err := os.WriteFile(filepath.Join(host, "my.cnf"), []byte(cnf.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		var help bytes.Buffer
		helpCmd := chrootMysqld(rootfs, "--defaults-file="+inside+"/my.cnf", "--help", "--verbose")
		helpCmd.Stdout = &help
		if err := proc.Run(helpCmd); err != nil {
			t.Fatalf("mysqld --help --verbose: %v", err)
		}
		got := ""
		for _, line := range strings.Split(help.String(), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "require-secure-transport" {
				got = f[1]
			}
		}
		if got != tc.want {
			t.Errorf("parameters %v: mysqld reads require-secure-transport = %q, want %q", tc.params, got, tc.want)
		}
	}
}
