package binlogarchive

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

const testCluster = "pg1"

// world is one real mysqld and one real S3 (behind a fault proxy) with an archiver on them.
type world struct {
	srv   *mysqldtest.Server
	db    *sql.DB
	store *objectstore.Client
	proxy *s3proxy.Proxy
	arch  *Archiver
	role  atomic.Pointer[Role]
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{}
	w.srv = mysqldtest.Start(t, mysqldtest.Options{})[0]
	w.db = w.srv.RootDB(t)
	s3 := s3test.Start(t)
	w.proxy = s3proxy.Start(t, s3.Endpoint)
	w.store = s3test.StoreClient(t, s3.StoreConfig(t, w.proxy.URL, "archive"), false)
	w.setRole(Role{Primary: true, LeaseRequired: true, LeaseHeld: true, Writable: true})
	w.arch = w.archiver(t, w.srv, w.db)
	_, err := w.db.ExecContext(t.Context(), "CREATE DATABASE app")
	check.Must(t, err)
	_, err = w.db.ExecContext(t.Context(), "CREATE TABLE app.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64))")
	check.Must(t, err)
	return w
}

func (w *world) setRole(r Role) { w.role.Store(&r) }

func (w *world) archiver(t *testing.T, srv *mysqldtest.Server, db *sql.DB) *Archiver {
	return &Archiver{
		Server: Server{DB: db}, Store: w.store, Cluster: testCluster, BinlogDir: srv.DataDir,
		Role:           func(context.Context) (Role, error) { r := *w.role.Load(); return r, nil },
		ArchiveTimeout: func() time.Duration { return time.Second },
		KeepLocal:      0, Interval: 200 * time.Millisecond, Clock: clock.RealClock{},
		Metrics: NewMetrics(nil), Log: testr.New(t),
	}
}

// load inserts rows until ctx ends and returns how many it committed.
func load(ctx context.Context, t *testing.T, db *sql.DB) *atomic.Int64 {
	var n atomic.Int64
	go func() {
		for ctx.Err() == nil {
			if _, err := db.ExecContext(ctx, "INSERT INTO app.t (v) VALUES (REPEAT('x', 64))"); err == nil {
				n.Add(1)
			}
		}
	}()
	return &n
}

func executed(t *testing.T, db *sql.DB) gtid.Set {
	var s string
	check.Must(t, db.QueryRowContext(t.Context(), "SELECT @@global.gtid_executed").Scan(&s))
	set, err := gtid.Parse(s)
	check.Must(t, err)
	return set
}

func binlogCount(t *testing.T, db *sql.DB) int {
	l, err := Server{DB: db}.BinaryLogs(t.Context())
	check.Must(t, err)
	return len(l)
}

// drain rotates and passes until the archive holds everything the server executed.
func (w *world) drain(t *testing.T, db *sql.DB, arch *Archiver) {
	t.Helper()
	_, err := db.ExecContext(t.Context(), "FLUSH BINARY LOGS")
	check.Must(t, err)
	check.Eventually(t, 30*time.Second, "the archive holds gtid_executed", func(ctx context.Context) (bool, error) {
		if _, err := arch.Pass(ctx); err != nil {
			return false, err
		}
		return w.archivedSet(t).Equal(executed(t, db)), nil
	})
}

func (w *world) archivedSet(t *testing.T) gtid.Set {
	index, _, err := w.store.ReadIndex(t.Context(), testCluster)
	check.Must(t, err)
	archived, _, err := archiveSets(index)
	check.Must(t, err)
	return archived
}

// verifySegments downloads every segment and compares its size and sha256 with the index.
func (w *world) verifySegments(t *testing.T) *objectstore.Index {
	t.Helper()
	index, _, err := w.store.ReadIndex(t.Context(), testCluster)
	check.Must(t, err)
	for _, s := range index.Segments {
		if strings.HasPrefix(s.Name, "other/") {
			continue // entries of a concurrent index writer, without objects
		}
		r, err := w.store.OpenSegment(t.Context(), testCluster, s.Name)
		check.Must(t, err)
		h := sha256.New()
		n, err := io.Copy(h, r)
		r.Close()
		check.Must(t, err)
		if n != s.Size || hex.EncodeToString(h.Sum(nil)) != s.SHA256 {
			t.Fatalf("segment %s: %d bytes sha256 %x, index says %d bytes %s", s.Name, n, h.Sum(nil), s.Size, s.SHA256)
		}
		if s.FirstEventTime.IsZero() || s.LastEventTime.Before(s.FirstEventTime) {
			t.Fatalf("segment %s: event times %v .. %v", s.Name, s.FirstEventTime, s.LastEventTime)
		}
	}
	return index
}

func TestArchiverUnderWriteLoad(t *testing.T) {
	w := newWorld(t)
	ctx, stop := context.WithCancel(t.Context())
	rows := load(ctx, t, w.db)
	runCtx, stopRun := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { w.arch.Run(runCtx) })
	// Another writer of the index at the same time (retention, another instance): no entry of
	// either may be lost.
	const others = 40
	wg.Go(func() {
		for i := range others {
			seg := objectstore.Segment{Name: fmt.Sprintf("other/entry-%02d", i), SHA256: hex.EncodeToString(make([]byte, 32))}
			if _, err := w.store.UpdateIndex(runCtx, testCluster, func(x *objectstore.Index) error { x.Upsert(seg); return nil }); err != nil {
				t.Errorf("concurrent index writer: %v", err)
				return
			}
		}
	})
	time.Sleep(6 * time.Second)
	stop()
	stopRun()
	wg.Wait()
	w.drain(t, w.db, w.arch)
	index := w.verifySegments(t)
	mine := 0
	for _, s := range index.Segments {
		if !strings.HasPrefix(s.Name, "other/") {
			mine++
		}
	}
	if want := int(testutil.ToFloat64(w.arch.Metrics.Segments)); mine != want || len(index.Segments) != mine+others {
		t.Fatalf("index lists %d segments of the archiver (it archived %d) and %d others (want %d): an update was lost",
			mine, want, len(index.Segments)-mine, others)
	}
	if len(index.Segments) < 3 {
		t.Fatalf("%d segments after 6 s of writes with a 1 s archive timeout: the open binlog is not rotated", len(index.Segments))
	}
	if got := w.archivedSet(t); !got.Equal(executed(t, w.db)) {
		t.Fatalf("archived %s, executed %s", got, executed(t, w.db))
	}
	if n := binlogCount(t, w.db); n > 2 {
		t.Fatalf("%d local binlogs remain although all are archived and KeepLocal is 0", n)
	}
	if testutil.ToFloat64(w.arch.Metrics.Lag) != 0 {
		t.Fatalf("lag %v after a drain", testutil.ToFloat64(w.arch.Metrics.Lag))
	}
	t.Logf("%d rows in %d segments", rows.Load(), len(index.Segments))
}

func TestArchiverStandsDownWhenNotPrimary(t *testing.T) {
	w := newWorld(t)
	for _, r := range []struct {
		why  string
		role Role
	}{
		{ReasonFenced, Role{Primary: true, Fenced: true, LeaseRequired: true, LeaseHeld: true, Writable: true}},
		{ReasonDemoted, Role{Primary: true, Demoted: true, LeaseRequired: true, LeaseHeld: true, Writable: true}},
		{ReasonNoLease, Role{Primary: true, LeaseRequired: true, Writable: true}},
		{ReasonNotPrimary, Role{LeaseRequired: true, Writable: true}},
	} {
		w.setRole(r.role)
		_, err := w.db.ExecContext(t.Context(), "FLUSH BINARY LOGS")
		check.Must(t, err)
		before := w.proxy.Total()
		d, err := w.arch.Pass(t.Context())
		check.Must(t, err)
		if d.StandDown != r.why || w.proxy.Total() != before {
			t.Fatalf("%s: stood down for %q after %d object store requests", r.why, d.StandDown, w.proxy.Total()-before)
		}
	}
	if n := binlogCount(t, w.db); n < 5 {
		t.Fatalf("%d binlogs: a standing-down archiver purged", n)
	}
	w.setRole(Role{Primary: true, Writable: true})
	w.drain(t, w.db, w.arch)
}

func TestArchiverKeepsBinlogsWhileTheStoreFails(t *testing.T) {
	w := newWorld(t)
	var reports []Health
	w.arch.Report = func(_ context.Context, h Health) { reports = append(reports, h) }
	w.drain(t, w.db, w.arch)
	w.proxy.Inject(s3proxy.Fault{Match: s3proxy.All(), Action: s3proxy.Status(http.StatusServiceUnavailable)})
	for range 3 {
		_, err := w.db.ExecContext(t.Context(), "INSERT INTO app.t (v) VALUES ('during the outage')")
		check.Must(t, err)
		_, err = w.db.ExecContext(t.Context(), "FLUSH BINARY LOGS")
		check.Must(t, err)
		if _, err := w.arch.Pass(t.Context()); err == nil {
			t.Fatal("a pass succeeded with the object store failing")
		}
	}
	if n := binlogCount(t, w.db); n < 4 {
		t.Fatalf("%d binlogs left: unarchived binlogs were purged during the outage", n)
	}
	last := reports[len(reports)-1]
	if last.OK || last.Reason != HealthFailed {
		t.Fatalf("last report %+v, want a failure", last)
	}
	if testutil.ToFloat64(w.arch.Metrics.Failures.WithLabelValues("index")) < 3 {
		t.Fatalf("failures metric %v", testutil.ToFloat64(w.arch.Metrics.Failures.WithLabelValues("index")))
	}
	w.proxy.ClearFaults()
	w.drain(t, w.db, w.arch)
	w.verifySegments(t)
	if last := reports[len(reports)-1]; !last.OK {
		t.Fatalf("after recovery the last report is %+v", last)
	}
}

func TestArchiverRefusesAFork(t *testing.T) {
	w := newWorld(t)
	w.drain(t, w.db, w.arch)
	foreign := objectstore.Segment{Name: "ffffffff-0000-0000-0000-000000000000/foreign", SHA256: hex.EncodeToString(make([]byte, 32)),
		GTIDRange: "ffffffff-0000-0000-0000-000000000000:1-3"}
	_, err := w.store.UpdateIndex(t.Context(), testCluster, func(x *objectstore.Index) error { x.Upsert(foreign); return nil })
	check.Must(t, err)
	_, err = w.db.ExecContext(t.Context(), "INSERT INTO app.t (v) VALUES ('after the fork')")
	check.Must(t, err)
	_, err = w.db.ExecContext(t.Context(), "FLUSH BINARY LOGS")
	check.Must(t, err)
	x0, _, err := w.store.ReadIndex(t.Context(), testCluster)
	check.Must(t, err)
	before := len(x0.Segments)
	_, err = w.arch.Pass(t.Context())
	if !errors.Is(err, ErrFork) {
		t.Fatalf("pass returned %v, want ErrFork", err)
	}
	x, _, err := w.store.ReadIndex(t.Context(), testCluster)
	check.Must(t, err)
	if len(x.Segments) != before || testutil.ToFloat64(w.arch.Metrics.Fork) != 1 {
		t.Fatalf("archived over a fork (%d segments, was %d), fork gauge %v", len(x.Segments), before, testutil.ToFloat64(w.arch.Metrics.Fork))
	}
}

// TestArchiverRefusesALocationItsClusterDoesNotHold: a primary whose Cluster does not hold its
// object store location (another incarnation's marker) neither reads nor writes the archive
// there: no request reaches the store, the health is ObjectStoreNotHeld, nothing is purged and
// no archive status is reported. Held again, it archives what waited, in the directory its
// Cluster names.
func TestArchiverRefusesALocationItsClusterDoesNotHold(t *testing.T) {
	w := newWorld(t)
	var reports []Health
	statuses := 0
	w.arch.Report = func(_ context.Context, h Health) { reports = append(reports, h) }
	w.arch.ReportStatus = func(context.Context, Health, *objectstore.Index) { statuses++ }
	w.arch.StatusEvery = time.Nanosecond
	w.setRole(Role{Primary: true, Writable: true, Dir: "pg1-v2",
		LocationNotHeld: "s3://bucket/archive/pg1-v2/ (InUse): the location belongs to Cluster default/pg1 (uid 1)"})
	for range 3 {
		_, err := w.db.ExecContext(t.Context(), "INSERT INTO app.t (v) VALUES ('not archived yet')")
		check.Must(t, err)
		_, err = w.db.ExecContext(t.Context(), "FLUSH BINARY LOGS")
		check.Must(t, err)
		before := w.proxy.Total()
		if _, err := w.arch.Pass(t.Context()); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("pass returned %v, want ErrNotHeld", err)
		}
		if n := w.proxy.Total() - before; n != 0 {
			t.Fatalf("%d object store requests for a location not held", n)
		}
	}
	if last := reports[len(reports)-1]; last.OK || last.Reason != HealthNotHeld || !strings.Contains(last.Message, "belongs to Cluster default/pg1") {
		t.Fatalf("last report %+v, want ObjectStoreNotHeld with the operator's reason", last)
	}
	if statuses != 0 {
		t.Fatalf("%d archive statuses reported for a location not held", statuses)
	}
	if n := binlogCount(t, w.db); n < 4 {
		t.Fatalf("%d binlogs left: unarchived binlogs were purged", n)
	}
	if got := autoPurge(t, w); got != 0 {
		t.Fatalf("binlog_expire_logs_auto_purge %d while the claim is pending, want OFF: the binlogs wait for it", got)
	}
	w.setRole(Role{Primary: true, Writable: true, Dir: "pg1-v2", LocationInUse: true, LocationNotHeld: "in use by another incarnation"})
	if _, err := w.arch.Pass(t.Context()); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("pass returned %v, want ErrNotHeld", err)
	}
	if got := autoPurge(t, w); got != 1 {
		t.Fatalf("binlog_expire_logs_auto_purge %d while another incarnation holds the location, want ON: mysqld's expiry bounds the binlogs", got)
	}
	w.setRole(Role{Primary: true, Writable: true, Dir: "pg1-v2"})
	_, err := w.db.ExecContext(t.Context(), "FLUSH BINARY LOGS")
	check.Must(t, err)
	check.Eventually(t, 30*time.Second, "the archive in pg1-v2 holds gtid_executed", func(ctx context.Context) (bool, error) {
		if _, err := w.arch.Pass(ctx); err != nil {
			return false, err
		}
		index, _, err := w.store.ReadIndex(ctx, "pg1-v2")
		if err != nil {
			return false, err
		}
		archived, _, err := archiveSets(index)
		return err == nil && archived.Equal(executed(t, w.db)), err
	})
	if last := reports[len(reports)-1]; !last.OK || statuses == 0 {
		t.Fatalf("held again: last report %+v, %d statuses", last, statuses)
	}
}

// autoPurge reads @@global.binlog_expire_logs_auto_purge.
func autoPurge(t *testing.T, w *world) int {
	t.Helper()
	var v int
	check.Must(t, w.db.QueryRowContext(t.Context(), "SELECT @@global.binlog_expire_logs_auto_purge").Scan(&v))
	return v
}
