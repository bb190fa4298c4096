package mysql_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// connectWithTLS connects to n as the replication account with cfg and returns the error.
func connectWithTLS(t *testing.T, n *node, cfg *tls.Config) error {
	t.Helper()
	return connectAs(t, n, testUsers.Replication.Name, replPassword, cfg)
}

// connectAs connects to n as user with cfg and returns the error.
func connectAs(t *testing.T, n *node, user, password string, cfg *tls.Config) error {
	t.Helper()
	name := "cnm-mysql-test-" + n.srv.Host
	check.Must(t, driver.RegisterTLSConfig(name, cfg))
	defer driver.DeregisterTLSConfig(name)
	dc := n.srv.MySQLConfig(user, password, "")
	dc.TLSConfig = name
	db, err := sql.Open("mysql", dc.FormatDSN())
	check.Must(t, err)
	defer db.Close()
	return db.PingContext(t.Context())
}

// testRequireSubject checks that an account created with RequireSubject accepts only a client
// certificate with that subject (the test CA issues client certificates to CN=root).
func testRequireSubject(t *testing.T, primary *node) {
	users := mysql.Users{
		Replication: mysql.Account{Name: "subj_ok", Password: "pw-ok", RequireSubject: "/CN=root"},
		Backup:      mysql.Account{Name: "subj_other", Password: "pw-other", RequireSubject: "/CN=someone-else"},
	}
	check.Must(t, primary.op.CreateUsers(t.Context(), users))
	if err := connectAs(t, primary, "subj_ok", "pw-ok", primary.srv.TLSConfig()); err != nil {
		t.Errorf("certificate with the required subject refused: %v", err)
	}
	if err := connectAs(t, primary, "subj_other", "pw-other", primary.srv.TLSConfig()); err == nil {
		t.Error("certificate with another subject accepted")
	}
}

// TestReplicationReadsRenewedClientCertificate: the replica's receiver reads the client
// certificate files (SOURCE_SSL_CERT, SOURCE_SSL_KEY) at each connection, so a renewed
// certificate needs no reload on the replica, only a reconnection. The source's account is
// pinned to one subject and then another: the replica connects with the new subject once its
// files hold it.
func TestReplicationReadsRenewedClientCertificate(t *testing.T) {
	ca, err := mysqldtest.NewCA()
	check.Must(t, err)
	var servers [2]*mysqldtest.Server
	for i := range servers {
		servers[i], err = mysqldtest.StartServer(t.Context(), mysqldtest.Config{CA: ca})
		check.Must(t, err)
		t.Cleanup(func() { _ = servers[i].Close() })
	}
	nodes := make([]*node, 2)
	for i, s := range servers {
		op, err := mysql.NewFactory().New(s.MySQLConfig("root", "", ""))
		check.Must(t, err)
		t.Cleanup(func() { op.Close() })
		nodes[i] = &node{srv: s, op: op, db: s.RootDB(t)}
	}
	primary, replica := nodes[0], nodes[1]
	ctx := t.Context()
	dir := filepath.Join(replica.srv.Dir, "replication-client")
	check.Must(t, os.MkdirAll(dir, 0o755))
	write := func(name string, data []byte) {
		tmp := filepath.Join(dir, "."+name)
		check.Must(t, os.WriteFile(tmp, data, 0o600))
		check.Must(t, os.Rename(tmp, filepath.Join(dir, name)))
	}
	write("ca.crt", ca.CertPEM)
	write("tls.crt", replica.srv.TLS.ClientCertPEM) // CN=root
	write("tls.key", replica.srv.TLS.ClientKeyPEM)
	users := func(subject string) mysql.Users {
		u := testUsers
		u.Replication.RequireSubject = subject
		return u
	}
	check.Must(t, primary.op.SetReadOnly(ctx, false))
	check.Must(t, primary.op.CreateUsers(ctx, users("/CN=root")))
	src := source(primary, replica)
	src.CAFile = replica.srv.InChroot(filepath.Join(dir, "ca.crt"))
	src.CertFile = replica.srv.InChroot(filepath.Join(dir, "tls.crt"))
	src.KeyFile = replica.srv.InChroot(filepath.Join(dir, "tls.key"))
	check.Must(t, replica.op.ConfigureReplication(ctx, src))
	reconnect := func() {
		check.Must(t, replica.op.StopReplication(ctx))
		check.Must(t, replica.op.StartReplication(ctx))
	}
	connected := func(ctx context.Context) (bool, error) {
		st, err := replica.op.Status(ctx)
		if err != nil || st.Replication == nil {
			return false, err
		}
		return st.Replication.IORunning == "Yes", nil
	}
	check.Must(t, replica.op.StartReplication(ctx))
	check.Eventually(t, 20*time.Second, "the replica connects with its first certificate", connected)

	check.Must(t, primary.op.CreateUsers(ctx, users("/CN=renewed")))
	reconnect()
	check.Eventually(t, 20*time.Second, "the old certificate is refused", func(ctx context.Context) (bool, error) {
		st, err := replica.op.Status(ctx)
		if err != nil || st.Replication == nil {
			return false, err
		}
		return st.Replication.IORunning != "Yes" && st.Replication.LastIOErrno != 0, nil
	})
	renewedCert, renewedKey, err := ca.Issue("renewed", x509.ExtKeyUsageClientAuth)
	check.Must(t, err)
	write("tls.key", renewedKey)
	write("tls.crt", renewedCert)
	reconnect()
	check.Eventually(t, 20*time.Second, "the replica connects with the renewed certificate, read from its files", connected)
}
