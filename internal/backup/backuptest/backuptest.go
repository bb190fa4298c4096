package backuptest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// SmallArgs keep a test mysqld small; --user=root because tests run as root.
var SmallArgs = []string{
	"--user=root",
	"--innodb-buffer-pool-size=32M",
	"--innodb-log-buffer-size=1M",
	"--innodb-redo-log-capacity=32M",
}

// Mysqld returns the mysqld command chrooted into the MySQL root filesystem.
func Mysqld() (localmysqld.Command, error) {
	rootfs, err := mysqldtest.RootFS()
	if err != nil {
		return localmysqld.Command{}, err
	}
	return localmysqld.Command{
		Argv: []string{"/usr/sbin/chroot", rootfs, localmysqld.DefaultMysqld},
		Root: rootfs,
		Args: SmallArgs,
	}, nil
}

// MysqldT is Mysqld for tests.
func MysqldT(t testing.TB) localmysqld.Command {
	t.Helper()
	c, err := Mysqld()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// NewScratch creates a directory inside the root filesystem; remove it when done.
func NewScratch(c localmysqld.Command) (string, error) {
	parent := filepath.Join(c.Root, "tmp", "cnm-backup")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(parent, strconv.Itoa(os.Getpid())+"-")
}

// Scratch is NewScratch for tests, removed when the test ends.
func Scratch(t testing.TB, c localmysqld.Command) string {
	t.Helper()
	dir, err := NewScratch(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// StoreConfig is the object store configuration a Cluster would carry for s, reached at
// endpoint (the server or a proxy in front of it), with the smallest part size.
func StoreConfig(s *s3test.Server, endpoint, path string) (objectstore.Config, error) {
	spec := &v1alpha1.ObjectStoreConfiguration{
		Bucket: s.Bucket, Path: path, Endpoint: endpoint, Region: s.Region, ForcePathStyle: true,
	}
	cfg, err := objectstore.ResolveConfig(spec, objectstore.SecretValues{
		Credentials: objectstore.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey},
	})
	if err != nil {
		return cfg, err
	}
	cfg.PartSize = objectstore.MinPartSize
	return cfg, nil
}

// Store returns a client for s through endpoint; retries off, so every injected fault surfaces.
func Store(t testing.TB, s *s3test.Server, endpoint, path string) *objectstore.Client {
	t.Helper()
	cfg, err := StoreConfig(s, endpoint, path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxRetries = 1
	c, err := objectstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Checksums returns CHECKSUM TABLE of every base table outside the system schemas, by
// "schema.table", and @@gtid_executed.
func Checksums(ctx context.Context, db *sql.DB) (map[string]int64, string, error) {
	rows, err := db.QueryContext(ctx, `SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN ('mysql', 'sys', 'performance_schema', 'information_schema')`)
	if err != nil {
		return nil, "", fmt.Errorf("listing tables: %w", err)
	}
	var names []string
	for rows.Next() {
		var schema, table string
		if err := rows.Scan(&schema, &table); err != nil {
			rows.Close()
			return nil, "", err
		}
		names = append(names, "`"+schema+"`.`"+table+"`")
	}
	rows.Close()
	sort.Strings(names)
	sums := map[string]int64{}
	for _, n := range names {
		var name string
		var sum sql.NullInt64
		if err := db.QueryRowContext(ctx, "CHECKSUM TABLE "+n).Scan(&name, &sum); err != nil {
			return nil, "", fmt.Errorf("CHECKSUM TABLE %s: %w", n, err)
		}
		sums[name] = sum.Int64
	}
	var executed string
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_executed").Scan(&executed); err != nil {
		return nil, "", err
	}
	return sums, executed, nil
}
