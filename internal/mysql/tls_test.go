package mysql_test

import (
	"crypto/tls"
	"database/sql"
	"testing"

	driver "github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
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
