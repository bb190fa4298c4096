package pitr_test

import (
	"errors"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/pitr"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestReplayToPointsInTime writes continuously while archiving and taking two base backups, then
// recovers to random instants, to a GTID set and to the latest archived transaction: each result
// holds exactly the rows the writer had committed before the target, and gtid_executed is the
// base backup's plus what was replayed.
func TestReplayToPointsInTime(t *testing.T) {
	w := newWorld(t)
	w.run(t, 2, 4*time.Second)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	first := w.backups[0].StoppedAt
	var candidates []int
	for i := range len(w.ops) - 1 {
		if w.ops[i].done.After(first) {
			candidates = append(candidates, i)
		}
	}
	if len(candidates) < 100 {
		t.Fatalf("only %d transactions after the first backup", len(candidates))
	}
	for n := range 3 {
		i := candidates[rng.IntN(len(candidates))]
		if n == 0 { // one inside the second backup's run, whose end is past the target
			for _, j := range candidates {
				if w.ops[j].done.After(w.backups[1].StartedAt) && w.ops[j+1].sent.Before(w.backups[1].StoppedAt) {
					i = j
					break
				}
			}
		}
		at := w.ops[i].done.Add(w.ops[i+1].sent.Sub(w.ops[i].done) / 2)
		t.Run("time "+at.Format(time.StampMicro), func(t *testing.T) {
			target := pitr.Target{Kind: pitr.AtTime, Time: at}
			base, rec, rows, executed := w.recoverChosen(t, target)
			if want := w.rowsAfter(i + 1); !maps.Equal(rows, want) {
				t.Fatalf("recovered %d rows, the writer had %d committed before the target (transaction %d of %d)",
					len(rows), len(want), i+1, len(w.ops))
			}
			if !executed.Equal(rec.result.Executed) || !executed.Equal(gtid.Union(gtid.MustParse(base.GTIDExecuted), rec.result.Applied)) {
				t.Fatalf("gtid_executed %s; the replay reported %s", executed, rec.result.Executed)
			}
			if rec.result.Applied.IsEmpty() && w.ops[i].done.After(base.StoppedAt) {
				t.Fatalf("nothing replayed for a target %s after the base backup's end", at)
			}
			t.Logf("base %s, transaction %d of %d, %d rows", base.BackupName, i+1, len(w.ops), len(rows))
		})
	}
	t.Run("a GTID set", func(t *testing.T) {
		k := -1
		for _, i := range candidates {
			if w.ops[i].executed != "" && w.ops[i].done.After(w.backups[1].StoppedAt) {
				k = i
				break
			}
		}
		if k < 0 {
			t.Fatal("no gtid_executed recorded after the second backup")
		}
		target := pitr.Target{Kind: pitr.AtGTID, GTID: gtid.MustParse(w.ops[k].executed)}
		_, _, rows, executed := w.recoverChosen(t, target)
		if want := w.rowsAfter(k + 1); !maps.Equal(rows, want) {
			t.Fatalf("recovered %d rows, the writer had %d at %s", len(rows), len(want), target.GTID)
		}
		if !executed.Equal(target.GTID) {
			t.Fatalf("gtid_executed %s, target %s", executed, target.GTID)
		}
	})
	t.Run("the latest archived transaction", func(t *testing.T) {
		target := pitr.Target{Kind: pitr.Latest}
		_, _, rows, executed := w.recoverChosen(t, target)
		if want := w.sourceRows(t); !maps.Equal(rows, want) {
			t.Fatalf("recovered %d rows, the source holds %d", len(rows), len(want))
		}
		if !executed.Equal(w.executed(t)) {
			t.Fatalf("gtid_executed %s, the source's %s", executed, w.executed(t))
		}
	})
}

// TestReplayRefusesABrokenArchive: a segment whose bytes differ from its index entry, a segment
// object that is gone, a segment missing from the index and a target past the archive each stop
// the replay with their error before anything is applied.
func TestReplayRefusesABrokenArchive(t *testing.T) {
	w := newWorld(t)
	w.run(t, 1, 4*time.Second)
	base := w.backups[0]
	index, _, err := w.store.ReadIndex(t.Context(), cluster)
	check.Must(t, err)
	plan, err := pitr.PlanReplay(index, gtid.MustParse(base.GTIDExecuted), pitr.Target{Kind: pitr.Latest})
	check.Must(t, err)
	if len(plan.Segments) < 3 {
		t.Fatalf("%d segments to replay; the test needs 3", len(plan.Segments))
	}
	middle := plan.Segments[len(plan.Segments)/2]
	objectPath := filepath.Join(w.s3.Dir, w.s3.Bucket, filepath.FromSlash(objectstore.BinlogKey("pitr", cluster, middle.Name)))
	original, err := os.ReadFile(objectPath)
	check.Must(t, err)
	refused := func(t *testing.T, target pitr.Target, want ...error) {
		t.Helper()
		rec, err := w.recover(t, base, target)
		for _, e := range want {
			if !errors.Is(err, e) {
				t.Fatalf("got %v, want %v", err, e)
			}
		}
		if !rec.result.Applied.IsEmpty() {
			t.Fatalf("applied %s before refusing", rec.result.Applied)
		}
		t.Logf("refused: %v", err)
	}
	t.Run("a segment with a flipped byte", func(t *testing.T) {
		corrupt := append([]byte(nil), original...)
		corrupt[len(corrupt)/2] ^= 0x20
		check.Must(t, os.WriteFile(objectPath, corrupt, 0o644))
		defer func() { check.Must(t, os.WriteFile(objectPath, original, 0o644)) }()
		refused(t, pitr.Target{Kind: pitr.Latest}, pitr.ErrSegment, objectstore.ErrChecksumMismatch)
	})
	t.Run("a segment object that is gone", func(t *testing.T) {
		check.Must(t, os.Remove(objectPath))
		defer func() { check.Must(t, os.WriteFile(objectPath, original, 0o644)) }()
		refused(t, pitr.Target{Kind: pitr.Latest}, pitr.ErrSegment, objectstore.ErrNotFound)
	})
	t.Run("a target time after the newest archived transaction", func(t *testing.T) {
		refused(t, pitr.Target{Kind: pitr.AtTime, Time: time.Now().Add(time.Hour)}, pitr.ErrBeyondArchive)
	})
	t.Run("a segment missing from the index", func(t *testing.T) {
		_, err := w.store.UpdateIndex(t.Context(), cluster, func(x *objectstore.Index) error { x.Remove(middle.Name); return nil })
		check.Must(t, err)
		refused(t, pitr.Target{Kind: pitr.Latest}, pitr.ErrGap)
	})
	t.Run("an index entry claiming transactions its segment lacks: gtid_executed differs after the replay", func(t *testing.T) {
		x, _, err := w.store.ReadIndex(t.Context(), cluster)
		check.Must(t, err)
		last := x.Segments[len(x.Segments)-1]
		executed := w.executed(t)
		claimed := gtid.Union(gtid.MustParse(last.GTIDRange), gtid.MustParse(sid(executed)+":1000000-1000009"))
		last.GTIDRange = claimed.String()
		_, err = w.store.UpdateIndex(t.Context(), cluster, func(x *objectstore.Index) error { x.Upsert(last); return nil })
		check.Must(t, err)
		target := pitr.Target{Kind: pitr.AtGTID, GTID: gtid.Union(executed, claimed)}
		// Without the segment removed above the chain is whole again.
		_, err = w.store.UpdateIndex(t.Context(), cluster, func(x *objectstore.Index) error { x.Upsert(middle); return nil })
		check.Must(t, err)
		_, err = w.recover(t, base, target)
		if !errors.Is(err, pitr.ErrReplayMismatch) {
			t.Fatalf("got %v, want ErrReplayMismatch", err)
		}
		t.Logf("refused: %v", err)
	})
}

// sid is the source UUID of a one-source GTID set.
func sid(s gtid.Set) string { return strings.SplitN(s.String(), ":", 2)[0] }

// TestReplayOfALargeRow replays a 24 MiB row event, larger than the mysql client's default packet
// limit (16 MiB). (mysqlbinlog 9.7 prints it in fragments, so this passes without the raised
// max_allowed_packet too; the raised limit is for events past the server's 64 MiB default.)
func TestReplayOfALargeRow(t *testing.T) {
	w := newWorld(t)
	w.run(t, 1, 0)
	_, err := w.db.ExecContext(t.Context(), "CREATE TABLE app.big (id INT PRIMARY KEY, body LONGTEXT)")
	check.Must(t, err)
	_, err = w.db.ExecContext(t.Context(), "INSERT INTO app.big VALUES (1, REPEAT('x', 24 << 20))")
	check.Must(t, err)
	w.run(t, 0, 0) // archive it
	rec, err := w.recover(t, w.backups[0], pitr.Target{Kind: pitr.Latest})
	check.Must(t, err)
	srv, err := localmysqld.Start(t.Context(), w.mysqld, localmysqld.Options{DataDir: rec.dataDir,
		RunDir: filepath.Join(filepath.Dir(rec.dataDir), "big-run"), Args: []string{"--skip-grant-tables", "--skip-log-bin"}})
	check.Must(t, err)
	defer func() { check.Must(t, srv.Shutdown()) }()
	var n int64
	check.Must(t, srv.DB().QueryRowContext(t.Context(), "SELECT LENGTH(body) FROM app.big WHERE id = 1").Scan(&n))
	if n != 24<<20 {
		t.Fatalf("the recovered row holds %d bytes, want %d", n, 24<<20)
	}
}
