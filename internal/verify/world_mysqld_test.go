package verify_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/archive"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/binlogarchive"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/verify"
)

const (
	prefix  = "verify"
	cluster = "pc1"
)

// world is a real mysqld with a few tables, a real S3 server and clone backups of the server in
// it; its binlogs are archived on demand by the real archiver.
type world struct {
	srv   *mysqldtest.Server
	db    *sql.DB
	s3    *s3test.Server
	store *objectstore.Client
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{srv: mysqldtest.Start(t, mysqldtest.Options{})[0], s3: s3test.Start(t)}
	w.db = w.srv.RootDB(t)
	w.store = backuptest.Store(t, w.s3, w.s3.Endpoint, prefix)
	backuptest.CreateAccounts(t, w.srv)
	w.exec(t, "CREATE DATABASE shop",
		"CREATE TABLE shop.customers (id INT PRIMARY KEY, name VARCHAR(100))",
		"CREATE TABLE shop.orders (id BIGINT PRIMARY KEY, customer INT, note TEXT, KEY (customer))",
		"CREATE DATABASE audit",
		"CREATE TABLE audit.events (id INT PRIMARY KEY AUTO_INCREMENT, payload LONGBLOB)")
	w.write(t, 0, 400)
	return w
}

func (w *world) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, st := range stmts {
		_, err := w.db.ExecContext(t.Context(), st)
		check.Must(t, err)
	}
}

// write inserts rows [from, to) in every table (to-from transactions per table).
func (w *world) write(t *testing.T, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		w.exec(t, fmt.Sprintf("INSERT INTO shop.customers VALUES (%d, 'c-%d')", i, i),
			fmt.Sprintf("INSERT INTO shop.orders VALUES (%d, %d, REPEAT('n%d', 40))", i, i%13, i),
			"INSERT INTO audit.events (payload) VALUES (RANDOM_BYTES(1024))")
	}
}

func (w *world) backup(t *testing.T, name string) *objectstore.Metadata {
	t.Helper()
	ref := objectstore.BackupRef{Cluster: cluster, Name: name, ID: time.Now().UTC().Format("20060102150405")}
	return backuptest.TakeClone(t, w.srv, w.store, ref, "ns")
}

// archive rotates the binlog and archives everything the server executed.
func (w *world) archive(t *testing.T) {
	t.Helper()
	role := binlogarchive.Role{Primary: true, Writable: true}
	a := &binlogarchive.Archiver{
		Server: binlogarchive.Server{DB: w.db}, Store: w.store, Cluster: cluster, BinlogDir: w.srv.DataDir,
		Role:           func(context.Context) (binlogarchive.Role, error) { return role, nil },
		ArchiveTimeout: func() time.Duration { return time.Second },
		Interval:       200 * time.Millisecond, Clock: clock.RealClock{},
		Metrics: binlogarchive.NewMetrics(nil), Log: testr.New(t),
	}
	w.exec(t, "FLUSH BINARY LOGS")
	for range 3 { // closed binlogs first, then the one FLUSH closed
		_, err := a.Pass(t.Context())
		check.Must(t, err)
	}
}

func (w *world) executed(t *testing.T) string {
	var s string
	check.Must(t, w.db.QueryRowContext(t.Context(), "SELECT @@GLOBAL.gtid_executed").Scan(&s))
	return s
}

// verify runs a verification of md with the real clock and budget.
func (w *world) verify(t *testing.T, md *objectstore.Metadata, archived bool, budget time.Duration) backupjob.VerifyResult {
	t.Helper()
	m := backuptest.MysqldT(t)
	scratch := backuptest.Scratch(t, m)
	cfg := verify.Config{Store: w.store, Ref: md.Ref(), ScratchDir: scratch, Mysqld: m, CheckBudget: budget,
		Now: time.Now, Log: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	if archived {
		cfg.Archive = cluster
	}
	before := w.objects(t)
	res := verify.Run(t.Context(), cfg)
	t.Logf("verification of %s: %+v", md.BackupName, res)
	if entries, _ := os.ReadDir(scratch); len(entries) != 0 {
		t.Errorf("the scratch directory holds %d entries after the verification (first %s)", len(entries), entries[0].Name())
	}
	if after := w.objects(t); !equalObjects(before, after) {
		t.Errorf("the object store changed during the verification:\nbefore %v\nafter  %v", before, after)
	}
	return res
}

// objects maps every object file of the bucket to the sha256 of its bytes.
func (w *world) objects(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join(w.s3.Dir, w.s3.Bucket)
	check.Must(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[p[len(root):]] = hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

func equalObjects(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// objectPath is the file versitygw's posix backend keeps an object in.
func (w *world) objectPath(key string) string {
	return filepath.Join(w.s3.Dir, w.s3.Bucket, filepath.FromSlash(key))
}

// tamper replaces the object key with edit's result for the rest of the test.
func (w *world) tamper(t *testing.T, key string, edit func([]byte) []byte) {
	t.Helper()
	path := w.objectPath(key)
	orig, err := os.ReadFile(path)
	check.Must(t, err)
	check.Must(t, os.WriteFile(path, edit(bytes.Clone(orig)), 0o644))
	t.Cleanup(func() { check.Must(t, os.WriteFile(path, orig, 0o644)) })
}

// repack rewrites md's archive after edit changed the unpacked data directory, and records the
// new archive's size and sha256 in metadata.json: a backup damaged inside whose checksums agree.
func (w *world) repack(t *testing.T, md *objectstore.Metadata, edit func(dataDir string)) {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	_, err := w.store.DownloadBackup(t.Context(), md.Ref(), &buf)
	check.Must(t, err)
	check.Must(t, archive.Unpack(&buf, dir))
	edit(dir)
	var packed bytes.Buffer
	check.Must(t, archive.Pack(t.Context(), dir, &packed))
	sum := sha256.Sum256(packed.Bytes())
	w.tamper(t, objectstore.ArchiveKey(prefix, md.Ref(), archive.Extension), func([]byte) []byte { return packed.Bytes() })
	w.editMetadata(t, md, func(m map[string]any) { m["size"], m["sha256"] = packed.Len(), hex.EncodeToString(sum[:]) })
}

// editMetadata changes md's metadata.json for the rest of the test.
func (w *world) editMetadata(t *testing.T, md *objectstore.Metadata, edit func(map[string]any)) {
	t.Helper()
	w.tamper(t, objectstore.MetadataKey(prefix, md.Ref()), func(b []byte) []byte {
		var m map[string]any
		check.Must(t, json.Unmarshal(b, &m))
		edit(m)
		out, err := json.Marshal(m)
		check.Must(t, err)
		return out
	})
}

// testWriter sends a logger's lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
