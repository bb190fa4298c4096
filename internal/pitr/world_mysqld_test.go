package pitr_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/binlogarchive"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/pitr"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

const cluster = "src"

// op is one committed transaction of the writer: an insert, update or delete of one row, with
// the instants before it was sent and after its commit returned.
type op struct {
	kind       string // "insert", "update", "delete"
	id         int64
	v          string
	sent, done time.Time
	// executed is gtid_executed read right after it, for some ops only (GTID targets).
	executed string
}

// world is a real mysqld archived by the real archiver into a real S3 server, written to
// continuously, with base backups taken by the clone method while it is written to.
type world struct {
	srv     *mysqldtest.Server
	db      *sql.DB
	s3      *s3test.Server
	store   *objectstore.Client
	mysqld  localmysqld.Command
	ops     []op
	backups []*objectstore.Metadata
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldOf(t, mysqldtest.Start(t, mysqldtest.Options{})[0])
}

// newWorldOf is newWorld on a server already started.
func newWorldOf(t *testing.T, srv *mysqldtest.Server) *world {
	t.Helper()
	w := &world{s3: s3test.Start(t), mysqld: backuptest.MysqldT(t), srv: srv}
	w.db = w.srv.RootDB(t)
	w.store = backuptest.Store(t, w.s3, w.s3.Endpoint, "pitr")
	backuptest.CreateAccounts(t, w.srv)
	for _, st := range []string{"CREATE DATABASE app", "CREATE TABLE app.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64) NOT NULL)"} {
		_, err := w.db.ExecContext(t.Context(), st)
		check.Must(t, err)
	}
	return w
}

func (w *world) archiver(t *testing.T) *binlogarchive.Archiver {
	role := binlogarchive.Role{Primary: true, Writable: true}
	return &binlogarchive.Archiver{
		Server: binlogarchive.Server{DB: w.db}, Store: w.store, Cluster: cluster, BinlogDir: w.srv.DataDir,
		Role:           func(context.Context) (binlogarchive.Role, error) { return role, nil },
		ArchiveTimeout: func() time.Duration { return time.Second },
		Interval:       200 * time.Millisecond, Clock: clock.RealClock{},
		Metrics: binlogarchive.NewMetrics(nil), Log: testr.New(t),
	}
}

// run writes continuously while archiving, takes the given number of clone backups one after
// the other (a second of writes before each), writes for tail more, then drains the archive.
func (w *world) run(t *testing.T, backups int, tail time.Duration) {
	arch := w.archiver(t)
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { arch.Run(ctx) })
	writeCtx, stopWriting := context.WithCancel(t.Context())
	defer stopWriting()
	var writeErr error
	wg.Go(func() { writeErr = w.write(writeCtx) })
	for i := range backups {
		time.Sleep(time.Second)
		w.backups = append(w.backups, w.backup(t, fmt.Sprintf("b%d", i)))
	}
	time.Sleep(tail)
	stopWriting()
	stop()
	wg.Wait()
	if writeErr != nil {
		t.Fatalf("writer: %v", writeErr)
	}
	_, err := w.db.ExecContext(t.Context(), "FLUSH BINARY LOGS")
	check.Must(t, err)
	check.Eventually(t, 30*time.Second, "the archive holds gtid_executed", func(ctx context.Context) (bool, error) {
		if _, err := arch.Pass(ctx); err != nil {
			return false, err
		}
		return w.archived(t).Equal(w.executed(t)), nil
	})
	t.Logf("%d transactions, %d base backups", len(w.ops), len(w.backups))
}

// write commits one-row transactions until ctx ends: mostly inserts, some updates and deletes.
func (w *world) write(ctx context.Context) error {
	rng := rand.New(rand.NewPCG(1, 2))
	var live []int64
	for n := 0; ctx.Err() == nil; n++ {
		o := op{kind: "insert", v: fmt.Sprintf("v%d-%x", n, rng.Uint64())}
		switch {
		case n%10 == 9 && len(live) > 0:
			i := rng.IntN(len(live))
			o.kind, o.id = "delete", live[i]
			live = append(live[:i], live[i+1:]...)
		case n%4 == 3 && len(live) > 0:
			o.kind, o.id = "update", live[rng.IntN(len(live))]
		}
		o.sent = time.Now()
		var res sql.Result
		var err error
		// A statement sent is seen through, so that every commit is in ops.
		run := context.WithoutCancel(ctx)
		switch o.kind {
		case "insert":
			res, err = w.db.ExecContext(run, "INSERT INTO app.t (v) VALUES (?)", o.v)
		case "update":
			_, err = w.db.ExecContext(run, "UPDATE app.t SET v = ? WHERE id = ?", o.v, o.id)
		case "delete":
			_, err = w.db.ExecContext(run, "DELETE FROM app.t WHERE id = ?", o.id)
		}
		if err != nil {
			return err
		}
		o.done = time.Now()
		if o.kind == "insert" {
			if o.id, err = res.LastInsertId(); err != nil {
				return err
			}
			live = append(live, o.id)
		}
		if n%50 == 25 {
			if err := w.db.QueryRowContext(run, "SELECT @@GLOBAL.gtid_executed").Scan(&o.executed); err != nil {
				return err
			}
		}
		w.ops = append(w.ops, o)
		time.Sleep(time.Millisecond)
	}
	return nil
}

// backup takes a clone backup of the server while it is written to.
func (w *world) backup(t *testing.T, name string) *objectstore.Metadata {
	t.Helper()
	ref := objectstore.BackupRef{Cluster: cluster, Name: name, ID: time.Now().UTC().Format("20060102150405")}
	md := backuptest.TakeClone(t, w.srv, w.store, ref, "ns")
	t.Logf("backup %s: %s .. %s, gtid %s", name, md.StartedAt.Format(time.StampMicro), md.StoppedAt.Format(time.StampMicro), md.GTIDExecuted)
	return md
}

func (w *world) executed(t *testing.T) gtid.Set {
	var s string
	check.Must(t, w.db.QueryRowContext(t.Context(), "SELECT @@GLOBAL.gtid_executed").Scan(&s))
	return gtid.MustParse(s)
}

func (w *world) archived(t *testing.T) gtid.Set {
	index, _, err := w.store.ReadIndex(t.Context(), cluster)
	check.Must(t, err)
	var all gtid.Set
	for _, s := range index.Segments {
		all = gtid.Union(all, gtid.MustParse(s.GTIDRange))
	}
	return all
}

// rowsAfter returns the table as the first n ops left it.
func (w *world) rowsAfter(n int) map[int64]string {
	rows := map[int64]string{}
	for _, o := range w.ops[:n] {
		switch o.kind {
		case "insert", "update":
			rows[o.id] = o.v
		case "delete":
			delete(rows, o.id)
		}
	}
	return rows
}

// recovered is a data directory restored and replayed.
type recovered struct {
	dataDir string
	result  pitr.Result
}

// recover restores base into a new data directory and replays it to target.
func (w *world) recover(t *testing.T, base *objectstore.Metadata, target pitr.Target) (recovered, error) {
	t.Helper()
	scratch := backuptest.Scratch(t, w.mysqld)
	dataDir := filepath.Join(scratch, "data")
	_, err := restore.Restore(t.Context(), restore.Config{Store: w.store, Ref: base.Ref(), DataDir: dataDir,
		RunDir: filepath.Join(scratch, "restore-run"), Mysqld: w.mysqld})
	check.Must(t, err)
	begin := time.Now()
	res, err := pitr.Replay(t.Context(), pitr.Config{Store: w.store, Cluster: cluster, Base: base, Target: target,
		DataDir: dataDir, ScratchDir: filepath.Join(scratch, "segments"), RunDir: filepath.Join(scratch, "replay-run"),
		Mysqld: w.mysqld})
	if err == nil {
		t.Logf("replayed %d transactions from %d segments (%d bytes) in %s", res.Applied.Count(), res.Segments, res.Bytes,
			time.Since(begin).Round(time.Millisecond))
	}
	return recovered{dataDir: dataDir, result: res}, err
}

// recoverChosen recovers to target from the base backup ChooseBase picks, and reads the result.
func (w *world) recoverChosen(t *testing.T, target pitr.Target) (*objectstore.Metadata, recovered, map[int64]string, gtid.Set) {
	t.Helper()
	base, err := pitr.ChooseBase(w.backups, target)
	check.Must(t, err)
	rec, err := w.recover(t, base, target)
	check.Must(t, err)
	rows, executed := w.rows(t, rec.dataDir)
	return base, rec, rows, executed
}

// rows reads the recovered table and gtid_executed.
func (w *world) rows(t *testing.T, dataDir string) (map[int64]string, gtid.Set) {
	t.Helper()
	srv, err := localmysqld.Start(t.Context(), w.mysqld, localmysqld.Options{DataDir: dataDir,
		RunDir: filepath.Join(filepath.Dir(dataDir), "check-run"), Args: []string{"--skip-grant-tables", "--skip-log-bin"}})
	check.Must(t, err)
	defer func() { check.Must(t, srv.Shutdown()) }()
	var executed string
	check.Must(t, srv.DB().QueryRowContext(t.Context(), "SELECT @@GLOBAL.gtid_executed").Scan(&executed))
	return tableRows(t, srv.DB()), gtid.MustParse(executed)
}

// sourceRows reads the source's table.
func (w *world) sourceRows(t *testing.T) map[int64]string { return tableRows(t, w.db) }

// tableRows reads app.t: v by id.
func tableRows(t *testing.T, db *sql.DB) map[int64]string {
	t.Helper()
	rows := map[int64]string{}
	rs, err := db.QueryContext(t.Context(), "SELECT id, v FROM app.t")
	check.Must(t, err)
	defer rs.Close()
	for rs.Next() {
		var id int64
		var v string
		check.Must(t, rs.Scan(&id, &v))
		rows[id] = v
	}
	check.Must(t, rs.Err())
	return rows
}
