package mysql_test

import (
	"database/sql"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// Secrets used by the tests; the tests check none of them leaks into an error.
const (
	replPassword   = "repl-S3cret'\\\"pw"
	backupPassword = "backup-S3cret'pw"
)

var testUsers = mysql.Users{
	Replication: mysql.Account{Name: "cnm_repl", Password: replPassword},
	Backup:      mysql.Account{Name: "cnm_backup", Password: backupPassword},
}

// node is one test server and the Operator that drives it as root.
type node struct {
	srv *mysqldtest.Server
	op  mysql.Operator
	db  *sql.DB
}

// startNodes starts n servers, with extraArgs on their command lines.
func startNodes(t *testing.T, n int, extraArgs ...string) []*node {
	t.Helper()
	servers := mysqldtest.Start(t, mysqldtest.Options{Count: n, ExtraArgs: extraArgs})
	nodes := make([]*node, n)
	for i, s := range servers {
		op, err := mysql.NewFactory().New(s.MySQLConfig("root", "", ""))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { op.Close() })
		nodes[i] = &node{srv: s, op: op, db: s.RootDB(t)}
	}
	return nodes
}

// source describes n as a replication source for the replica r, with r's client certificate.
func source(n, r *node) mysql.Source {
	return mysql.Source{
		Host: n.srv.Host, Port: n.srv.Port, User: testUsers.Replication.Name, Password: replPassword,
		CAFile: r.srv.InChroot(r.srv.TLS.CAFile), CertFile: r.srv.InChroot(r.srv.TLS.ClientCertFile),
		KeyFile: r.srv.InChroot(r.srv.TLS.ClientKeyFile), VerifyServerCert: true,
	}
}

func donor(n, r *node) mysql.Donor {
	return mysql.Donor{
		Host: n.srv.Host, Port: n.srv.Port, User: testUsers.Backup.Name, Password: backupPassword,
		CAFile: r.srv.InChroot(r.srv.TLS.CAFile), CertFile: r.srv.InChroot(r.srv.TLS.ClientCertFile),
		KeyFile: r.srv.InChroot(r.srv.TLS.ClientKeyFile),
	}
}

func (n *node) status(t *testing.T) *mysql.Status {
	t.Helper()
	st, err := n.op.Status(t.Context())
	if err != nil {
		t.Fatalf("status of %s: %v", n.srv.Addr(), err)
	}
	return st
}

func (n *node) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := n.db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s on %s: %v", s, n.srv.Addr(), err)
		}
	}
}
