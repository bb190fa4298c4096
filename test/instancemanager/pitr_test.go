package instancemanager

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/pitr"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// writtenRow is one row the writer inserted, with the instants around its commit.
type writtenRow struct {
	id         int64
	v          string
	sent, done time.Time
}

// TestPointInTimeRecovery: a source Cluster whose instance manager archives its binlogs is written
// to continuously while a base backup is taken; new Clusters recover from its bucket to a random
// instant (two instances) and from its Backup object to the latest archived transaction. Each
// holds exactly the rows committed before its target, on every instance, and was never writable
// before its Recovered condition was True. A corrupted segment and a segment missing from the
// index stop recoveries that need them, which never serve.
func TestPointInTimeRecovery(t *testing.T) {
	w := startRecoveryWorld(t)
	ns := w.env.NewNamespace(t)
	w.createStoreSecret(t, ns)
	w.createCluster(t, ns, "src", 1, nil, func(s *v1alpha1.ClusterSpec) {
		store := w.objectStore()
		s.Backup = &v1alpha1.BackupConfiguration{ObjectStore: &store, ArchiveTimeout: &metav1.Duration{Duration: time.Second}}
	})
	src := w.startNodes(t, ns, "src", 1)[0]
	w.waitPrimary(t, ns, "src", src)
	src.exec(t, "CREATE DATABASE IF NOT EXISTS app", "CREATE TABLE app.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64) NOT NULL)")

	ctx, stop := context.WithCancel(t.Context())
	commits := make(chan []writtenRow)
	go func() { commits <- insertUntil(ctx, src.db) }()
	time.Sleep(time.Second)
	base := w.takeBackup(t, ns, "src", src, "src-b1")
	time.Sleep(4 * time.Second)
	stop()
	written := <-commits
	store := backuptest.Store(t, w.s3, w.s3.Endpoint, w.prefix)
	w.waitArchived(t, store, src)
	t.Logf("%d rows written; base backup %s .. %s", len(written), base.md.StartedAt.Format(time.StampMicro), base.md.StoppedAt.Format(time.StampMicro))
	t.Run("the source's status and kubectl get cluster show the recoverable window", func(t *testing.T) {
		w.checkArchiveStatus(t, ns, store, base)
	})

	t.Run("from the bucket to a random instant, on both instances", func(t *testing.T) {
		var after []int
		for i := range len(written) - 1 {
			if written[i].done.After(base.md.StoppedAt) {
				after = append(after, i)
			}
		}
		if len(after) < 50 {
			t.Fatalf("only %d rows after the base backup", len(after))
		}
		i := after[rand.IntN(len(after))]
		at := written[i].done.Add(written[i+1].sent.Sub(written[i].done) / 2)
		w.createCluster(t, ns, "pit", 2, &v1alpha1.BootstrapRecovery{
			Source:         &v1alpha1.RecoverySource{ClusterName: "src", ObjectStore: w.objectStore()},
			RecoveryTarget: &v1alpha1.RecoveryTarget{TargetTime: at.UTC().Format(time.RFC3339Nano)}})
		nodes := w.startNodes(t, ns, "pit", 2, withRootPassword(t, "pit-root-pw"))
		watch := w.watchWrites(t, ns, "pit", nodes[0])
		w.waitPrimary(t, ns, "pit", nodes[0], nodes[1])
		w.checkPointInTime(t, ns, "pit", watch, nodes, rowsOf(written[:i+1]))
		t.Logf("target %s: row %d of %d", at.Format(time.StampMicro), i+1, len(written))
	})
	t.Run("from the Backup object to the latest archived transaction", func(t *testing.T) {
		w.createCluster(t, ns, "latest", 1, &v1alpha1.BootstrapRecovery{
			Backup:         &v1alpha1.LocalObjectReference{Name: base.name},
			RecoveryTarget: &v1alpha1.RecoveryTarget{TargetLatest: true}})
		nodes := w.startNodes(t, ns, "latest", 1, withRootPassword(t, "latest-root-pw"))
		watch := w.watchWrites(t, ns, "latest", nodes[0])
		w.waitPrimary(t, ns, "latest", nodes[0])
		w.checkPointInTime(t, ns, "latest", watch, nodes, tableRows(t, src.db))
	})
	t.Run("a corrupted segment and a segment missing from the index stop the recoveries that need them", func(t *testing.T) {
		// The source's archiver would archive a segment removed from the index again, from its
		// local binlog: the archive heals. Stop it to keep the gap.
		src.stop(t)
		index, _, err := store.ReadIndex(t.Context(), "src")
		must(t, err)
		plan, err := pitr.PlanReplay(index, gtid.MustParse(base.md.GTIDExecuted), pitr.Target{Kind: pitr.Latest})
		must(t, err)
		if len(plan.Segments) < 3 {
			t.Fatalf("%d segments after the base backup; the test needs 3", len(plan.Segments))
		}
		first, later := plan.Segments[0], plan.Segments[len(plan.Segments)-2]
		object := filepath.Join(w.s3.Dir, w.s3.Bucket, filepath.FromSlash(objectstore.BinlogKey(w.prefix, "src", first.Name)))
		data, err := os.ReadFile(object)
		must(t, err)
		data[len(data)/2] ^= 0x20
		must(t, os.WriteFile(object, data, 0o644))
		_, err = store.UpdateIndex(t.Context(), "src", func(x *objectstore.Index) error { x.Remove(later.Name); return nil })
		must(t, err)
		source := &v1alpha1.RecoverySource{ClusterName: "src", ObjectStore: w.objectStore()}
		w.expectRecoveryFailures(t, ns, []failingRecovery{
			// A target the first segment reaches: the gap further on does not matter, the
			// corruption does.
			{"corrupt", v1alpha1.ReasonRecoveryVerificationFailed, &v1alpha1.BootstrapRecovery{Source: source,
				RecoveryTarget: &v1alpha1.RecoveryTarget{TargetTime: first.LastEventTime.UTC().Format(time.RFC3339Nano)}}},
			{"gap", v1alpha1.ReasonRecoveryArchiveIncomplete, &v1alpha1.BootstrapRecovery{Source: source,
				RecoveryTarget: &v1alpha1.RecoveryTarget{TargetLatest: true}}},
		})
	})
}

// insertUntil inserts rows one transaction at a time until ctx ends.
func insertUntil(ctx context.Context, db *sql.DB) []writtenRow {
	var out []writtenRow
	for n := 0; ; n++ {
		c := writtenRow{v: fmt.Sprintf("row-%d-%x", n, rand.Uint64()), sent: time.Now()}
		res, err := db.ExecContext(ctx, "INSERT INTO app.t (v) VALUES (?)", c.v)
		if ctx.Err() != nil {
			return out // the last insert may or may not have committed; only earlier ones count
		}
		if err != nil {
			continue
		}
		c.done = time.Now()
		if c.id, err = res.LastInsertId(); err == nil {
			out = append(out, c)
		}
		time.Sleep(time.Millisecond)
	}
}

func rowsOf(commits []writtenRow) map[int64]string {
	rows := map[int64]string{}
	for _, c := range commits {
		rows[c.id] = c.v
	}
	return rows
}

func tableRows(t *testing.T, db *sql.DB) map[int64]string {
	t.Helper()
	rows := map[int64]string{}
	rs, err := db.QueryContext(t.Context(), "SELECT id, v FROM app.t")
	must(t, err)
	defer rs.Close()
	for rs.Next() {
		var id int64
		var v string
		must(t, rs.Scan(&id, &v))
		rows[id] = v
	}
	must(t, rs.Err())
	return rows
}

// waitArchived waits until the archive holds every transaction the source executed.
func (w *recoveryWorld) waitArchived(t *testing.T, store *objectstore.Client, src *node) {
	t.Helper()
	eventually(t, 60*time.Second, "the archive holds src's gtid_executed", func() bool {
		index, _, err := store.ReadIndex(t.Context(), "src")
		if err != nil {
			return false
		}
		var archived gtid.Set
		for _, s := range index.Segments {
			archived = gtid.Union(archived, gtid.MustParse(s.GTIDRange))
		}
		var executed string
		if src.db.QueryRowContext(t.Context(), "SELECT @@GLOBAL.gtid_executed").Scan(&executed) != nil {
			return false
		}
		return archived.Equal(gtid.MustParse(executed))
	})
}

// checkPointInTime checks a recovered Cluster: every instance holds exactly want in app.t, the
// status records the replay and a gtid_executed the instances hold, and the first instance was
// writable only once the recovery was reported.
func (w *recoveryWorld) checkPointInTime(t *testing.T, ns, cluster string, watch *writeWatch, nodes []*node, want map[int64]string) {
	t.Helper()
	_, writable, recoveredFirst := watch.result()
	if !writable || !recoveredFirst {
		t.Errorf("%s-1 writable %v; the Recovered condition True when it first was: %v (want both)", cluster, writable, recoveredFirst)
	}
	pit := w.cluster(t, ns, cluster).Status.Recovery.PointInTime
	if pit == nil || pit.Segments == 0 || pit.Transactions == 0 {
		t.Fatalf("status.recovery.pointInTime = %+v, want a replay", pit)
	}
	for _, n := range nodes {
		var got map[int64]string
		eventually(t, 30*time.Second, n.name+" holds the rows", func() bool {
			got = tableRows(t, n.db)
			if maps.Equal(got, want) {
				return true
			}
			t.Logf("%s: %d rows, want %d: %s", n.name, len(got), len(want), rowDiff(got, want))
			return false
		})
		var executed string
		must(t, n.db.QueryRowContext(t.Context(), "SELECT @@GLOBAL.gtid_executed").Scan(&executed))
		if !gtid.MustParse(executed).Contains(gtid.MustParse(pit.GTIDExecuted)) {
			t.Errorf("%s: gtid_executed %s lacks the replayed %s", n.name, executed, pit.GTIDExecuted)
		}
	}
	t.Logf("%s: %d rows on %d instances; %s: %d transactions from %d segments", cluster, len(want), len(nodes),
		pit.Target, pit.Transactions, pit.Segments)
	w.waitEvent(t, ns, cluster, v1alpha1.EventBackupRestored, "Normal")
}

// rowDiff describes how got differs from want, for messages.
func rowDiff(got, want map[int64]string) string {
	var missing, extra, changed []int64
	for id, v := range want {
		if g, ok := got[id]; !ok {
			missing = append(missing, id)
		} else if g != v {
			changed = append(changed, id)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			extra = append(extra, id)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	slices.Sort(changed)
	clip := func(ids []int64) []int64 { return ids[:min(len(ids), 5)] }
	return fmt.Sprintf("missing %d %v, extra %d %v, changed %d %v", len(missing), clip(missing), len(extra), clip(extra),
		len(changed), clip(changed))
}

// checkArchiveStatus waits for the source's status.binlogArchive to show the window from the end
// of base to the newest archived transaction, with no lag, and reads it in kubectl get cluster.
func (w *recoveryWorld) checkArchiveStatus(t *testing.T, ns string, store *objectstore.Client, base sourceBackup) {
	t.Helper()
	index, _, err := store.ReadIndex(t.Context(), "src")
	must(t, err)
	var newest objectstore.Segment
	for _, s := range index.Segments {
		if s.LastEventTime.After(newest.LastEventTime) {
			newest = s
		}
	}
	var st *v1alpha1.BinlogArchiveStatus
	eventually(t, 60*time.Second, "status.binlogArchive of src", func() bool {
		st = w.cluster(t, ns, "src").Status.BinlogArchive
		return st != nil && st.RecoverableTo != nil && st.RecoverableTo.Time.Equal(newest.LastEventTime) && st.LagSeconds == 0
	})
	if st.RecoverableFrom == nil || !st.RecoverableFrom.Time.Equal(base.md.StoppedAt.Truncate(time.Microsecond)) ||
		st.FirstRecoverableBackup != base.name+"/"+base.md.BackupID || st.LastSegment != newest.Name ||
		st.Instance != "src-1" || st.ReportedAt == nil {
		t.Fatalf("status.binlogArchive = %+v; want the window from %s (%s) to %s, last segment %s", st,
			base.md.StoppedAt, base.name, newest.LastEventTime, newest.Name)
	}
	assets, err := kubetest.AssetsDir()
	must(t, err)
	out, err := exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", w.kubeconfig, "-n", ns,
		"get", "cluster", "src", "-o", "wide").CombinedOutput()
	must(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "RECOVERABLE-FROM") || !strings.Contains(lines[0], "RECOVERABLE-TO") ||
		!strings.Contains(lines[0], "LAST-SEGMENT") || !strings.Contains(lines[1], newest.Name) || strings.Contains(lines[1], "<none>") {
		t.Fatalf("kubectl get cluster -o wide:\n%s", out)
	}
	t.Logf("recoverable from %s to %s\n%s", st.RecoverableFrom.Format(time.StampMicro), st.RecoverableTo.Format(time.StampMicro), out)
}
