package mysqldtest_test

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
	"github.com/go-sql-driver/mysql"
)

func queryString(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	var v sql.NullString
	if err := db.QueryRowContext(t.Context(), query, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v.String
}

func TestSmoke(t *testing.T) {
	begin := time.Now()
	servers := mysqldtest.Start(t, mysqldtest.Options{Count: 2})
	t.Logf("2 servers ready in %s", time.Since(begin).Round(time.Millisecond))

	if servers[0].Addr() == servers[1].Addr() || servers[0].ServerID == servers[1].ServerID {
		t.Fatalf("servers share an address or server_id: %s/%d, %s/%d",
			servers[0].Addr(), servers[0].ServerID, servers[1].Addr(), servers[1].ServerID)
	}
	uuids := map[string]bool{}
	for _, s := range servers {
		db := s.RootDB(t)
		uuids[queryString(t, db, "SELECT @@server_uuid")] = true
		checkServer(t, s, db)
	}
	if len(uuids) != 2 {
		t.Errorf("server_uuid not unique across servers: %v", uuids)
	}

	for _, s := range servers {
		pid := s.PID()
		begin := time.Now()
		if err := s.Stop(); err != nil {
			t.Fatalf("stop %s: %v", s.Addr(), err)
		}
		t.Logf("%s stopped in %s", s.Addr(), time.Since(begin).Round(time.Millisecond))
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("mysqld pid %d still exists after Stop: %v", pid, err)
		}
		if s.Running() {
			t.Errorf("%s reports running after Stop", s.Addr())
		}
		log, err := s.ErrorLog()
		if err != nil || !strings.Contains(log, "Shutdown complete") {
			t.Errorf("error log of %s lacks a clean shutdown (err %v):\n%s", s.Addr(), err, log)
		}
	}
}

func checkServer(t *testing.T, s *mysqldtest.Server, db *sql.DB) {
	t.Helper()
	if got := queryString(t, db, "SELECT @@gtid_mode"); got != "ON" {
		t.Errorf("%s: gtid_mode = %q, want ON", s.Addr(), got)
	}
	status := queryString(t, db,
		"SELECT plugin_status FROM information_schema.plugins WHERE plugin_name = 'clone'")
	if status != "ACTIVE" {
		t.Errorf("%s: clone plugin status = %q, want ACTIVE", s.Addr(), status)
	}
	var name, cipher string
	if err := db.QueryRowContext(t.Context(), "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil {
		t.Fatalf("Ssl_cipher: %v", err)
	}
	if cipher == "" {
		t.Errorf("%s: session is not encrypted", s.Addr())
	}

	before := queryString(t, db, "SELECT @@gtid_executed")
	for _, stmt := range []string{
		"CREATE DATABASE smoke",
		"CREATE TABLE smoke.t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO smoke.t VALUES (1, 'hello')",
	} {
		if _, err := db.ExecContext(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %s: %v", s.Addr(), stmt, err)
		}
	}
	if got := queryString(t, db, "SELECT v FROM smoke.t WHERE id = 1"); got != "hello" {
		t.Errorf("%s: read back %q, want hello", s.Addr(), got)
	}
	after := queryString(t, db, "SELECT @@gtid_executed")
	subset := queryString(t, db, "SELECT GTID_SUBSET(?, ?)", before, after)
	if after == before || subset != "1" {
		t.Errorf("%s: gtid_executed did not advance: before %q, after %q", s.Addr(), before, after)
	}
}

func TestTLSVerification(t *testing.T) {
	s := mysqldtest.Start(t, mysqldtest.Options{})[0]
	if got := s.InChroot(s.TLS.CAFile); !strings.HasPrefix(got, "/tmp/cnm-test/") {
		t.Errorf("InChroot(%s) = %s", s.TLS.CAFile, got)
	}
	other, err := mysqldtest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	otherCA := s.TLSConfig()
	otherCA.RootCAs = x509.NewCertPool()
	otherCA.RootCAs.AppendCertsFromPEM(other.CertPEM)
	otherName := s.TLSConfig()
	otherName.ServerName = "127.0.0.254"
	for name, cfg := range map[string]*tls.Config{"other CA": otherCA, "other server name": otherName} {
		key := "mysqldtest-test-" + strings.ReplaceAll(name, " ", "-")
		if err := mysql.RegisterTLSConfig(key, cfg); err != nil {
			t.Fatal(err)
		}
		dsn := s.MySQLConfig("root", "", "")
		dsn.TLSConfig = key
		db, err := sql.Open("mysql", dsn.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		err = db.PingContext(t.Context())
		db.Close()
		mysql.DeregisterTLSConfig(key)
		var verr *tls.CertificateVerificationError
		if !errors.As(err, &verr) {
			t.Errorf("%s: got %v, want a certificate verification error", name, err)
		}
	}
}

func TestKillAndRestart(t *testing.T) {
	s := mysqldtest.Start(t, mysqldtest.Options{})[0]
	db := s.RootDB(t)
	if _, err := db.ExecContext(t.Context(), "CREATE DATABASE survives"); err != nil {
		t.Fatal(err)
	}
	oldPID := s.PID()
	if err := s.Kill(); err != nil {
		t.Fatalf("kill: %v", err)
	}
	if s.Running() {
		t.Fatal("running after Kill")
	}
	begin := time.Now()
	if err := s.Restart(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	t.Logf("restart after crash took %s", time.Since(begin).Round(time.Millisecond))
	if s.PID() == oldPID || !s.Running() {
		t.Fatalf("not running a new process after Restart (pid %d, was %d)", s.PID(), oldPID)
	}
	got := queryString(t, db, "SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'survives'")
	if got != "survives" {
		t.Errorf("database lost across crash and restart: %q", got)
	}
}
