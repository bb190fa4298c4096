package instance

import (
	"database/sql"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// TestSupervisorRunsMysqld supervises a real mysqld started from a rendered my.cnf: it starts
// read-only with the configured identity, comes back after a SIGKILL, and shuts down cleanly
// when the context ends. The data directory and TLS material come from a mysqldtest server,
// stopped first, to skip a data directory initialization.
func TestSupervisorRunsMysqld(t *testing.T) {
	srv := mysqldtest.Start(t, mysqldtest.Options{})[0]
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	rootfs, err := mysqldtest.RootFS()
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t, srv.Host)
	dir := srv.InChroot(srv.Dir)
	cnf, err := RenderMyCnf(MyCnfInput{
		Serial: 42, Port: port, BindAddress: srv.Host, ReportHost: srv.Host,
		DataDir: srv.InChroot(srv.DataDir), RunDir: dir, ErrorLog: dir + "/supervised.log", User: "root",
		TLS: TLSPaths{CAFile: srv.InChroot(srv.TLS.CAFile), CertFile: srv.InChroot(srv.TLS.CertFile),
			KeyFile: srv.InChroot(srv.TLS.KeyFile)},
		Parameters: map[string]string{
			"innodb_buffer_pool_size": "32M", "innodb_redo_log_capacity": "32M", "performance_schema": "OFF",
			"mysqlx": "OFF", "secure_file_priv": "", "skip_name_resolve": "ON", "max_connections": "20",
		},
	})
	if err != nil || len(cnf.Refused) > 0 {
		t.Fatalf("render: %v, refused %v", err, cnf.Refused)
	}
	if err := os.WriteFile(filepath.Join(srv.Dir, "my.cnf"), []byte(cnf.Text), 0o644); err != nil {
		t.Fatal(err)
	}
	sup := &Supervisor{
		Command:     func() *exec.Cmd { return chrootMysqld(rootfs, "--defaults-file="+dir+"/my.cnf") },
		GracePeriod: 30 * time.Second,
		Backoff:     Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Stable: 10 * time.Second},
		Log:         testr.New(t),
	}
	begin := time.Now()
	cancel, wait := runSupervisor(t, sup)
	cfg := srv.MySQLConfig("root", "", "")
	cfg.Addr = net.JoinHostPort(srv.Host, strconv.Itoa(port))
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	eventually(t, 60*time.Second, func() bool { return db.PingContext(t.Context()) == nil })
	t.Logf("mysqld accepting connections %s after the supervisor started", time.Since(begin).Round(time.Millisecond))
	var serverID int
	var superReadOnly bool
	if err := db.QueryRowContext(t.Context(), "SELECT @@server_id, @@super_read_only").Scan(&serverID, &superReadOnly); err != nil {
		t.Fatal(err)
	}
	if serverID != 42 || !superReadOnly {
		t.Errorf("server_id %d, super_read_only %v; want 42 and read-only at start", serverID, superReadOnly)
	}

	pid := sup.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	begin = time.Now()
	eventually(t, 60*time.Second, func() bool { return sup.PID() != 0 && sup.PID() != pid && db.PingContext(t.Context()) == nil })
	t.Logf("mysqld back %s after SIGKILL (pid %d -> %d)", time.Since(begin).Round(time.Millisecond), pid, sup.PID())

	begin = time.Now()
	cancel()
	if err := wait(); err != nil {
		t.Errorf("Run after cancel = %v, want a clean shutdown", err)
	}
	t.Logf("clean shutdown took %s", time.Since(begin).Round(time.Millisecond))
	log, _ := os.ReadFile(filepath.Join(srv.Dir, "supervised.log"))
	if n := strings.Count(string(log), "Shutdown complete"); n != 1 {
		t.Errorf("error log shows %d clean shutdowns, want 1 (the crash is not one)", n)
	}
	if sup.Starts() != 2 {
		t.Errorf("mysqld started %d times, want 2", sup.Starts())
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
