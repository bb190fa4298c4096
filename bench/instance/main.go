package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/bench/internal/instancenode"
)

func main() {
	sizeMB := flag.Int("size-mb", 1024, "data loaded on the primary before a new replica clones it")
	flag.Parse()
	if err := run(context.Background(), *sizeMB); err != nil {
		fmt.Fprintln(os.Stderr, "bench/instance:", err)
		os.Exit(1)
	}
}

// instanceOptions: the managers reconcile every 200 ms, so that readiness is seen early.
var instanceOptions = instancenode.Options{ReconcileInterval: 200 * time.Millisecond}

// clusterSpec is the Cluster of three instances with semi-sync the benchmark runs.
func clusterSpec() v1alpha1.ClusterSpec {
	return v1alpha1.ClusterSpec{Instances: 3, MinSyncReplicas: 1, MaxSyncReplicas: 2, MaxSwitchoverDelay: 60,
		Storage: v1alpha1.StorageConfiguration{Size: resource.MustParse("10Gi")},
		MySQL: v1alpha1.MySQLConfiguration{SemiSync: &v1alpha1.SemiSyncConfiguration{
			Enabled: true, TimeoutMillis: 2000, DataDurability: v1alpha1.DataDurabilityPreferred}}}
}

func run(ctx context.Context, sizeMB int) error {
	w, err := instancenode.Setup(ctx, clusterSpec())
	if w != nil {
		defer w.Teardown()
	}
	if err != nil {
		return err
	}
	begin := time.Now()
	for i := 1; i <= 3; i++ {
		if _, err := w.AddNode(fmt.Sprintf("db-%d", i), instanceOptions); err != nil {
			return err
		}
	}
	if err := instancenode.WaitReady(ctx, 5*time.Minute, w.Nodes...); err != nil {
		return err
	}
	fmt.Printf("nothing to three ready instances: %s\n", time.Since(begin).Round(time.Millisecond))
	if err := load(ctx, w.Nodes[0], sizeMB); err != nil {
		return err
	}
	return benchClone(ctx, w)
}

// load writes sizeMB of data on the primary, 16 rows of 1 MiB per transaction.
func load(ctx context.Context, primary *instancenode.Node, sizeMB int) error {
	for _, s := range []string{"CREATE DATABASE bench", "CREATE TABLE bench.t (id INT AUTO_INCREMENT PRIMARY KEY, pad LONGBLOB)"} {
		if _, err := primary.DB.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	begin := time.Now()
	for done := 0; done < sizeMB; done += 16 {
		_, err := primary.DB.ExecContext(ctx, "INSERT INTO bench.t (pad) WITH RECURSIVE s(n) AS "+
			"(SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 16) SELECT REPEAT(UUID(), 29128) FROM s")
		if err != nil {
			return fmt.Errorf("loading data: %w", err)
		}
	}
	fmt.Printf("loaded %d MB on the primary (replicated, semi-sync): %s\n", sizeMB, time.Since(begin).Round(time.Millisecond))
	return nil
}

// benchClone starts a fourth instance, which clones the primary, then copies its data directory
// with cp -a for comparison.
func benchClone(ctx context.Context, w *instancenode.World) error {
	begin := time.Now()
	n, err := w.AddNode("db-4", instanceOptions)
	if err != nil {
		return err
	}
	if err := instancenode.WaitReady(ctx, 30*time.Minute, n); err != nil {
		return err
	}
	ready := time.Since(begin)
	cloneTook, err := cloneDuration(filepath.Join(n.Dir, "manager.log"))
	if err != nil {
		return err
	}
	size, err := dirSize(filepath.Join(n.Dir, "data"), false)
	if err != nil {
		return err
	}
	cloned, err := dirSize(filepath.Join(n.Dir, "data"), true)
	if err != nil {
		return err
	}
	mb, cmb := float64(size)/1e6, float64(cloned)/1e6
	fmt.Printf("new replica by clone: %.0f MB of tablespaces cloned (data directory %.0f MB with redo and logs); "+
		"clone + restart %s (%.0f MB/s of tablespaces); start to ready %s\n",
		cmb, mb, cloneTook.Round(time.Millisecond), cmb/cloneTook.Seconds(), ready.Round(time.Millisecond))
	dst := filepath.Join(w.Base, "raw-copy")
	begin = time.Now()
	if out, err := exec.Command("cp", "-a", filepath.Join(n.Dir, "data"), dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a: %w: %s", err, out)
	}
	syscall.Sync()
	took := time.Since(begin)
	fmt.Printf("raw copy (cp -a + sync) of that data directory: %s (%.0f MB/s)\n", took.Round(time.Millisecond), mb/took.Seconds())
	return os.RemoveAll(dst)
}

// cloneDuration reads the "cloned" log line of a manager.
func cloneDuration(log string) (time.Duration, error) {
	data, err := os.ReadFile(log)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		var entry struct {
			Msg  string  `json:"msg"`
			Took float64 `json:"took"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "cloned" {
			return time.Duration(entry.Took * float64(time.Second)), nil
		}
	}
	return 0, fmt.Errorf("no clone in %s", log)
}

// dirSize sums the regular files under dir; tablespacesOnly leaves out the redo log, temporary
// tablespaces and binary and relay logs, which a clone does not transfer.
func dirSize(dir string, tablespacesOnly bool) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if tablespacesOnly && (name == "#innodb_redo" || name == "#innodb_temp") && d.IsDir() {
			return filepath.SkipDir
		}
		if d.IsDir() || tablespacesOnly && (strings.HasPrefix(name, "binlog.") || strings.HasPrefix(name, "relay-bin.")) {
			return nil
		}
		info, err := d.Info()
		if err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
		return err
	})
	return total, err
}
