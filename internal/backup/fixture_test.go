package backup_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

const (
	backupUser     = "cnm_backup"
	backupPassword = "bk-S3cret'\"\\pw"
)

// source is the instance under backup, with data in several tables.
type source struct {
	srv    *mysqldtest.Server
	db     *sql.DB
	mysqld localmysqld.Command
}

func startSource(t *testing.T) *source {
	t.Helper()
	srv := mysqldtest.Start(t, mysqldtest.Options{})[0]
	op, err := mysql.NewFactory().New(srv.MySQLConfig("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	users := mysql.Users{
		Replication: mysql.Account{Name: "cnm_repl", Password: "repl-pw"},
		Backup:      mysql.Account{Name: backupUser, Password: backupPassword},
	}
	if err := op.CreateUsers(t.Context(), users); err != nil {
		t.Fatal(err)
	}
	s := &source{srv: srv, db: srv.RootDB(t), mysqld: backuptest.MysqldT(t)}
	s.exec(t,
		"CREATE DATABASE shop",
		"CREATE TABLE shop.customers (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(100), balance DECIMAL(12,2))",
		"CREATE TABLE shop.orders (id BIGINT PRIMARY KEY, customer INT, note TEXT, at DATETIME(6), KEY (customer))",
		"CREATE DATABASE audit",
		"CREATE TABLE audit.events (id INT PRIMARY KEY, payload JSON, blob_data LONGBLOB)",
	)
	s.write(t, 0, 300)
	return s
}

func (s *source) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, st := range stmts {
		if _, err := s.db.ExecContext(t.Context(), st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

// write inserts rows [from, to) in every table.
func (s *source) write(t *testing.T, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		s.exec(t,
			fmt.Sprintf("INSERT INTO shop.customers (id, name, balance) VALUES (%d, 'c-%d', %d.25)", i+1, i, i*7),
			fmt.Sprintf("INSERT INTO shop.orders VALUES (%d, %d, REPEAT('n%d', 50), '2026-01-02 03:04:05.%06d')", i, i%17, i, i),
			fmt.Sprintf(`INSERT INTO audit.events VALUES (%d, '{"k": %d}', RANDOM_BYTES(1024))`, i, i),
		)
	}
}

func (s *source) checksums(t *testing.T) (map[string]int64, string) {
	t.Helper()
	sums, executed, err := backuptest.Checksums(t.Context(), s.db)
	if err != nil {
		t.Fatal(err)
	}
	return sums, executed
}

// donor describes the source for a recipient, with the source's client certificate.
func (s *source) donor() backup.Donor {
	return backup.Donor{
		Host: s.srv.Host, Port: s.srv.Port, User: backupUser, Password: backupPassword,
		CAFile: s.srv.TLS.CAFile, CertFile: s.srv.TLS.ClientCertFile, KeyFile: s.srv.TLS.ClientKeyFile,
	}
}

func (s *source) producer(t *testing.T) *backup.CloneProducer {
	t.Helper()
	p, err := backup.NewCloneProducer(backup.CloneConfig{
		Mysqld: s.mysqld, ScratchDir: backuptest.Scratch(t, s.mysqld), Donor: s.donor(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// restoredChecksums starts mysqld without grants on a restored data directory and reads its
// checksums.
func restoredChecksums(ctx context.Context, t *testing.T, m localmysqld.Command, dataDir string) (map[string]int64, string) {
	t.Helper()
	srv, err := localmysqld.Start(ctx, m, localmysqld.Options{
		DataDir: dataDir, RunDir: filepath.Join(filepath.Dir(dataDir), "check-run"),
		Args: []string{"--skip-grant-tables", "--skip-log-bin"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Shutdown(); err != nil {
			t.Error(err)
		}
	}()
	sums, executed, err := backuptest.Checksums(ctx, srv.DB())
	if err != nil {
		t.Fatal(err)
	}
	return sums, executed
}
