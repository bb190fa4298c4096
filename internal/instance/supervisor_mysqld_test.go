package instance

import (
	"crypto/x509"
	"database/sql"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	driver "github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// TestBootstrapAndSupervise initializes a data directory with a rendered my.cnf, then supervises
// that mysqld: it starts read-only with the configured identity, comes back after a SIGKILL, is
// bootstrapped by clone from a donor and started again by the supervisor, and shuts down cleanly
// when the context ends.
func TestBootstrapAndSupervise(t *testing.T) {
	rootfs, host, inside := chrootDir(t)
	writeServerTLS(t, filepath.Join(host, "tls"))
	cnf, err := RenderMyCnf(MyCnfInput{
		Serial: 42, Port: freePort(t, "127.0.0.1"), BindAddress: "127.0.0.1",
		ReportHost: "c-42", DataDir: inside + "/data",
		RunDir: inside, ErrorLog: inside + "/error.log", User: "root",
		TLS: TLSPaths{CAFile: inside + "/tls/ca.pem", CertFile: inside + "/tls/cert.pem", KeyFile: inside + "/tls/key.pem"},
		Parameters: map[string]string{
			"innodb_buffer_pool_size": "32M", "innodb_redo_log_capacity": "32M", "performance_schema": "OFF",
			"secure_file_priv": "",
		},
	})
	if err != nil || len(cnf.Refused) != 0 {
		t.Fatalf("render: %v, refused %v", err, cnf.Refused)
	}
	if err := os.WriteFile(filepath.Join(host, "my.cnf"), []byte(cnf.Text), 0o644); err != nil {
		t.Fatal(err)
	}
	mysqld := func(extra ...string) *exec.Cmd {
		return chrootMysqld(rootfs, append([]string{"--defaults-file=" + inside + "/my.cnf"}, extra...)...)
	}
	if has, err := HasData(filepath.Join(host, "data")); has || err != nil {
		t.Fatalf("HasData before initialization = %v, %v", has, err)
	}
	begin := time.Now()
	if err := InitializeDataDir(t.Context(), mysqld); err != nil {
		t.Fatal(err)
	}
	t.Logf("data directory initialized in %s", time.Since(begin).Round(time.Millisecond))
	if has, err := HasData(filepath.Join(host, "data")); !has || err != nil {
		t.Fatalf("HasData after initialization = %v, %v", has, err)
	}

	sup := &Supervisor{
		Command:     func() *exec.Cmd { return mysqld() },
		GracePeriod: 30 * time.Second,
		Backoff:     Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Stable: 10 * time.Second},
		Log:         testr.New(t),
	}
	begin = time.Now()
	cancel, wait := runSupervisor(t, sup)
	// root@localhost, over the socket, as the instance manager connects.
	cfg := driver.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", filepath.Join(host, "mysqld.sock")
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	eventually(t, 60*time.Second, func() bool { return db.PingContext(t.Context()) == nil })
	t.Logf("mysqld accepting connections %s after the supervisor started", time.Since(begin).Round(time.Millisecond))
	var serverID int
	var superReadOnly, gtidMode string
	if err := db.QueryRowContext(t.Context(), "SELECT @@server_id, @@super_read_only, @@gtid_mode").
		Scan(&serverID, &superReadOnly, &gtidMode); err != nil {
		t.Fatal(err)
	}
	if serverID != 42 || superReadOnly != "1" || gtidMode != "ON" {
		t.Errorf("server_id %d, super_read_only %s, gtid_mode %s; want 42, read-only, GTIDs", serverID, superReadOnly, gtidMode)
	}

	crashAndWait(t, sup, db)

	testCloneBootstrap(t, host, inside, cfg)

	begin = time.Now()
	cancel()
	if err := wait(); err != nil {
		t.Errorf("Run after cancel = %v, want a clean shutdown", err)
	}
	t.Logf("clean shutdown took %s", time.Since(begin).Round(time.Millisecond))
	log, _ := os.ReadFile(filepath.Join(host, "error.log"))
	if n := strings.Count(string(log), "Shutdown complete"); n != 2 {
		t.Errorf("error log shows %d clean shutdowns, want 2: after the clone and at the end (the crash is not one)", n)
	}
	if sup.Starts() != 3 {
		t.Errorf("mysqld started %d times, want 3 (first start, after the crash, after the clone)", sup.Starts())
	}
}

// writeServerTLS writes a CA and a server certificate for mysqld into dir.
func writeServerTLS(t *testing.T, dir string) {
	t.Helper()
	ca, err := mysqldtest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Issue("mysqld", x509.ExtKeyUsageServerAuth, "127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"ca.pem": ca.CertPEM, "cert.pem": cert, "key.pem": key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func freePort(t *testing.T, host string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// crashAndWait kills mysqld as a crash would and waits until the supervisor has it answering again.
func crashAndWait(t *testing.T, sup *Supervisor, db *sql.DB) {
	t.Helper()
	pid := sup.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	eventually(t, 60*time.Second, func() bool { return sup.PID() != 0 && sup.PID() != pid && db.PingContext(t.Context()) == nil })
	t.Logf("mysqld back %s after SIGKILL (pid %d -> %d)", time.Since(begin).Round(time.Millisecond), pid, sup.PID())
}
