package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

func main() {
	sizeMB := flag.Int("size-mb", 1024, "data loaded on the primary before a new replica clones it")
	flag.Parse()
	if err := run(context.Background(), *sizeMB); err != nil {
		fmt.Fprintln(os.Stderr, "bench/instance:", err)
		os.Exit(1)
	}
}

// world is what the benchmark started, to be stopped at the end.
type world struct {
	env                   *kubetest.Env
	bin, rootfs, base, ns string
	kubeconfig            string
	pki                   pki
	nodes                 []*node
	firstHost             int
}

func run(ctx context.Context, sizeMB int) error {
	w, err := setup(ctx)
	if w != nil {
		defer w.teardown()
	}
	if err != nil {
		return err
	}
	begin := time.Now()
	for i := 1; i <= 3; i++ {
		if _, err := w.addNode(fmt.Sprintf("db-%d", i)); err != nil {
			return err
		}
	}
	if err := waitReady(ctx, 5*time.Minute, w.nodes...); err != nil {
		return err
	}
	fmt.Printf("nothing to three ready instances: %s\n", time.Since(begin).Round(time.Millisecond))
	if err := load(ctx, w.nodes[0], sizeMB); err != nil {
		return err
	}
	return benchClone(ctx, w)
}

func setup(ctx context.Context) (*world, error) {
	rootfs, err := mysqldtest.RootFS()
	if err != nil {
		return nil, err
	}
	w := &world{rootfs: rootfs, firstHost: 20 + os.Getpid()%200}
	if w.base, err = os.MkdirTemp(filepath.Join(rootfs, "tmp"), "cnm-bench-"); err != nil {
		return nil, err
	}
	w.bin = filepath.Join(w.base, "manager")
	if out, err := exec.Command("go", "build", "-o", w.bin, "./cmd/manager").CombinedOutput(); err != nil {
		return w, fmt.Errorf("building the manager (run from the repository root): %w\n%s", err, out)
	}
	if w.env, err = kubetest.Start(kubetest.Options{}); err != nil {
		return w, err
	}
	kc, err := w.env.AdminKubeconfig()
	if err != nil {
		return w, err
	}
	w.kubeconfig = filepath.Join(w.base, "kubeconfig")
	if err := os.WriteFile(w.kubeconfig, kc, 0o600); err != nil {
		return w, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}
	if err := w.env.Client.Create(ctx, ns); err != nil {
		return w, err
	}
	w.ns = ns.Name
	if w.pki, err = newPKI(); err != nil {
		return w, err
	}
	return w, createCluster(ctx, w)
}

func createCluster(ctx context.Context, w *world) error {
	c := &v1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: w.ns},
		Spec: v1alpha1.ClusterSpec{Instances: 3, MinSyncReplicas: 1, MaxSyncReplicas: 2, MaxSwitchoverDelay: 60,
			Storage: v1alpha1.StorageConfiguration{Size: resource.MustParse("10Gi")},
			MySQL: v1alpha1.MySQLConfiguration{SemiSync: &v1alpha1.SemiSyncConfiguration{
				Enabled: true, TimeoutMillis: 2000, DataDurability: v1alpha1.DataDurabilityPreferred}}},
	}
	if err := w.env.Client.Create(ctx, c); err != nil {
		return fmt.Errorf("creating the Cluster: %w", err)
	}
	now := metav1.Now()
	c.Status.TargetPrimary, c.Status.TargetPrimaryTimestamp = "db-1", &now
	return w.env.Client.Status().Update(ctx, c)
}

// addNode prepares and starts one more instance manager.
func (w *world) addNode(name string) (*node, error) {
	host := net.IPv4(127, 0, 0, byte(w.firstHost+len(w.nodes)+1)).String()
	n, err := newNode(w.pki, w.base, name, host)
	if err != nil {
		return nil, err
	}
	w.nodes = append(w.nodes, n)
	for _, other := range w.nodes {
		if other.manager == nil {
			if err := other.start(w.bin, w.rootfs, w.kubeconfig, w.ns, w.nodes); err != nil {
				return nil, err
			}
		}
	}
	return n, nil
}

func (w *world) teardown() {
	for _, n := range w.nodes {
		n.stop()
	}
	if w.env != nil {
		_ = w.env.Stop()
	}
	_ = os.RemoveAll(w.base)
}

// load writes sizeMB of data on the primary, 16 rows of 1 MiB per transaction.
func load(ctx context.Context, primary *node, sizeMB int) error {
	for _, s := range []string{"CREATE DATABASE bench", "CREATE TABLE bench.t (id INT AUTO_INCREMENT PRIMARY KEY, pad LONGBLOB)"} {
		if _, err := primary.db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	begin := time.Now()
	for done := 0; done < sizeMB; done += 16 {
		_, err := primary.db.ExecContext(ctx, "INSERT INTO bench.t (pad) WITH RECURSIVE s(n) AS "+
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
func benchClone(ctx context.Context, w *world) error {
	begin := time.Now()
	n, err := w.addNode("db-4")
	if err != nil {
		return err
	}
	if err := waitReady(ctx, 30*time.Minute, n); err != nil {
		return err
	}
	ready := time.Since(begin)
	cloneTook, err := cloneDuration(filepath.Join(n.dir, "manager.log"))
	if err != nil {
		return err
	}
	size, err := dirSize(filepath.Join(n.dir, "data"), false)
	if err != nil {
		return err
	}
	cloned, err := dirSize(filepath.Join(n.dir, "data"), true)
	if err != nil {
		return err
	}
	mb, cmb := float64(size)/1e6, float64(cloned)/1e6
	fmt.Printf("new replica by clone: %.0f MB of tablespaces cloned (data directory %.0f MB with redo and logs); "+
		"clone + restart %s (%.0f MB/s of tablespaces); start to ready %s\n",
		cmb, mb, cloneTook.Round(time.Millisecond), cmb/cloneTook.Seconds(), ready.Round(time.Millisecond))
	dst := filepath.Join(w.base, "raw-copy")
	begin = time.Now()
	if out, err := exec.Command("cp", "-a", filepath.Join(n.dir, "data"), dst).CombinedOutput(); err != nil {
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
