// Package benchsource is the source server of the benchmarks that back up and restore: a mysqld
// sized for bulk loading, with a backup account, grown to a data size.
package benchsource

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// The backup account StartSource creates.
const (
	BackupUser     = "bench_backup"
	BackupPassword = "bench-backup-pw"
)

// StartSource starts a mysqld sized for bulk loading, with the backup account.
func StartSource(ctx context.Context) (*mysqldtest.Server, *sql.DB, error) {
	srv, err := mysqldtest.StartServer(ctx, mysqldtest.Config{ExtraArgs: []string{
		"--innodb-buffer-pool-size=512M", "--innodb-redo-log-capacity=1G", "--innodb-log-buffer-size=64M",
		"--max-allowed-packet=256M", "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2",
	}})
	if err != nil {
		return nil, nil, err
	}
	op, err := mysql.NewFactory().New(srv.MySQLConfig("root", "", ""))
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	defer op.Close()
	err = op.CreateUsers(ctx, mysql.Users{Replication: mysql.Account{Name: "bench_repl", Password: "r"},
		Backup: mysql.Account{Name: BackupUser, Password: BackupPassword}})
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	db, err := srv.OpenDB(ctx, "root", "", "")
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	return srv, db, nil
}

// Grow adds rows of ~1 KiB (half random, half repetitive, so zstd has work) to bench.rows until
// the data directory holds about bytes.
func Grow(ctx context.Context, db *sql.DB, srv *mysqldtest.Server, bytes int64) error {
	begin := time.Now()
	for _, st := range []string{
		"CREATE DATABASE IF NOT EXISTS bench",
		"CREATE TABLE IF NOT EXISTS bench.rows (id BIGINT PRIMARY KEY AUTO_INCREMENT, k INT, body VARBINARY(1100), KEY (k))",
	} {
		if _, err := db.ExecContext(ctx, st); err != nil {
			return err
		}
	}
	for {
		size, err := DirSize(filepath.Join(srv.DataDir, "bench"))
		if err != nil {
			return err
		}
		if size >= bytes {
			fmt.Printf("# table data %.2f GB after %s of loading\n", float64(size)/1e9, time.Since(begin).Round(time.Second))
			return nil
		}
		// Batches of at most 256k rows keep each transaction (and the binlog cache) bounded.
		stmt := "INSERT INTO bench.rows (k, body) SELECT FLOOR(RAND()*1000000), CONCAT(RANDOM_BYTES(512), REPEAT(CHAR(65 + id % 26), 512)) " +
			"FROM bench.rows LIMIT 262144"
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT 1 FROM bench.rows LIMIT 1) x").Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			stmt = "INSERT INTO bench.rows (k, body) VALUES (1, CONCAT(RANDOM_BYTES(512), REPEAT('a', 512)))"
		}
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("loading: %w", err)
		}
	}
}

// DirSize is the total size of the regular files under dir.
func DirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	return total, err
}
