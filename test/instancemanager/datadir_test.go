package instancemanager

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// startSingle is a world of one instance, db-1, whose manager is not started yet.
func startSingle(t *testing.T) (*world, *node) {
	env := kubetest.StartT(t, kubetest.Options{})
	bin := buildManager(t)
	rootfs, base := rootFS(t)
	ns := env.NewNamespace(t)
	must(t, env.Client.Create(t.Context(), &v1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec: v1alpha1.ClusterSpec{Instances: 1, MaxSwitchoverDelay: 60,
			Storage: v1alpha1.StorageConfiguration{Size: resource.MustParse("1Gi")}},
	}))
	w := &world{env: env, key: types.NamespacedName{Namespace: ns, Name: "db"}, nodes: map[string]*node{}}
	w.setTarget(t, "db-1")
	n := newNode(t, newPKI(t), base, "db-1", net.IPv4(127, 0, 0, byte(20+syscall.Getpid()%200)).String())
	w.nodes[n.name] = n
	kubeconfig := env.KubeconfigFile(t)
	w.start = func(t *testing.T, n *node) { n.start(t, bin, rootfs, kubeconfig, ns, []*node{n}) }
	return w, n
}

// mkLostAndFound makes the directory mkfs.ext4 leaves at the root of a fresh volume.
func mkLostAndFound(t *testing.T, volume string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Join(volume, "lost+found"), 0o700))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, fs.ErrNotExist)
}

// A fresh ext4 volume holds lost+found, and mysqld --initialize refuses a data directory that
// is not empty: the instance's data directory is a subdirectory of the volume, so the first
// instance bootstraps and serves on such a volume.
func TestBootstrapOnAVolumeWithLostAndFound(t *testing.T) {
	w, n := startSingle(t)
	volume := filepath.Join(n.dir, "volume")
	mkLostAndFound(t, volume)
	n.args = []string{"--data-volume", volume, "--data-dir", filepath.Join(volume, "data")}
	w.start(t, n)
	w.waitRoles(t, 2*time.Minute, "db-1")
	n.exec(t, "CREATE DATABASE IF NOT EXISTS app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1)")
	if !fileExists(filepath.Join(volume, "data", "mysql.ibd")) || !fileExists(filepath.Join(volume, "data", "app")) {
		t.Errorf("the data directory is not %s/data", volume)
	}
	if entries, err := os.ReadDir(filepath.Join(volume, "lost+found")); err != nil || len(entries) != 0 {
		t.Errorf("lost+found was touched: %v %v", entries, err)
	}
}

// A data directory left at the volume's root by an earlier version is moved into the
// subdirectory at the next start: same server, same data (a schema named "data" included),
// nothing initialized anew.
func TestDataDirAtTheVolumeRootIsMovedBelowIt(t *testing.T) {
	w, n := startSingle(t)
	volume := filepath.Join(n.dir, "volume")
	n.args = []string{"--data-dir", volume} // the earlier layout: the data directory is the volume
	w.start(t, n)
	w.waitRoles(t, 2*time.Minute, "db-1")
	n.exec(t, "CREATE DATABASE data", "CREATE TABLE data.t (id INT PRIMARY KEY)", "INSERT INTO data.t VALUES (7)")
	before := n.status(t)
	n.stop(t)
	if !fileExists(filepath.Join(volume, "mysql.ibd")) {
		t.Fatalf("the earlier layout did not put the data directory at %s", volume)
	}

	mkLostAndFound(t, volume)
	n.args = []string{"--data-volume", volume, "--data-dir", filepath.Join(volume, "data")}
	w.start(t, n)
	w.waitRoles(t, 2*time.Minute, "db-1")
	after := n.status(t)
	if after.ServerUUID != before.ServerUUID || !after.GTIDExecuted.Contains(before.GTIDExecuted) {
		t.Errorf("after the move the server is %s with %s, want %s with at least %s (the same data directory)",
			after.ServerUUID, after.GTIDExecuted, before.ServerUUID, before.GTIDExecuted)
	}
	var id int
	must(t, n.db.QueryRowContext(t.Context(), "SELECT id FROM data.t").Scan(&id))
	if id != 7 {
		t.Errorf("data.t holds %d, want 7", id)
	}
	for _, p := range []string{"mysql.ibd", "auto.cnf", ".datadir-migrating"} {
		if fileExists(filepath.Join(volume, p)) {
			t.Errorf("%s is still at the volume's root", p)
		}
	}
	if !fileExists(filepath.Join(volume, "data", "mysql.ibd")) || !fileExists(filepath.Join(volume, "data", "data", "t.ibd")) {
		t.Errorf("the data directory was not moved to %s/data", volume)
	}
}
