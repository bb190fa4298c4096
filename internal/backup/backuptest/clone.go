package backuptest

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// The accounts CreateAccounts creates on a source: what a Cluster's instances have.
const (
	BackupUser     = "cnm_backup"
	BackupPassword = "bk-pw"
)

// CreateAccounts creates the replication and backup accounts on srv, as an instance has them.
func CreateAccounts(t testing.TB, srv *mysqldtest.Server) {
	t.Helper()
	op, err := mysql.NewFactory().New(srv.MySQLConfig("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if err := op.CreateUsers(t.Context(), mysql.Users{
		Replication: mysql.Account{Name: "cnm_repl", Password: "repl-pw"},
		Backup:      mysql.Account{Name: BackupUser, Password: BackupPassword},
	}); err != nil {
		t.Fatal(err)
	}
}

// TakeClone backs srv up with the clone method (accounts of CreateAccounts) into store as ref,
// recorded as written by namespace.
func TakeClone(t testing.TB, srv *mysqldtest.Server, store objectstore.Store, ref objectstore.BackupRef, namespace string) *objectstore.Metadata {
	t.Helper()
	m := MysqldT(t)
	p, err := backup.NewCloneProducer(backup.CloneConfig{Mysqld: m, ScratchDir: Scratch(t, m),
		Donor: backup.Donor{Host: srv.Host, Port: srv.Port, User: BackupUser, Password: BackupPassword,
			CAFile: srv.TLS.CAFile, CertFile: srv.TLS.ClientCertFile, KeyFile: srv.TLS.ClientKeyFile}})
	if err != nil {
		t.Fatal(err)
	}
	md, err := backup.Run(t.Context(), store, ref, backup.Owner{Namespace: namespace}, p)
	if err != nil {
		t.Fatalf("backup %s: %v", ref.Name, err)
	}
	return md
}
