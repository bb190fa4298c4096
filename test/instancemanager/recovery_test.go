package instancemanager

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/location"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// recoveryWorld is the API server, the S3 server and what the instances of several Clusters
// share; each Cluster gets its own addresses.
type recoveryWorld struct {
	env                *kubetest.Env
	s3                 *s3test.Server
	bin, rootfs, base  string
	kubeconfig, prefix string
	pki                pki
	nextHost           int
}

// sourceBackup is one backup of the source Cluster: its metadata and the tables it holds.
type sourceBackup struct {
	name string
	md   *objectstore.Metadata
	sums map[string]int64
}

// TestRecovery bootstraps Clusters from backups of another Cluster, with real instance managers,
// mysqld, versitygw and the API server (the test plays the operator's part: targetPrimary). The
// source is a one-instance Cluster whose two clone backups are uploaded as a backup Job would.
func TestRecovery(t *testing.T) {
	w := startRecoveryWorld(t)
	ns := w.env.NewNamespace(t)
	w.createStoreSecret(t, ns)
	b1, b2, srcNodes := w.backUpSource(t, ns)
	steps := []struct {
		name string
		run  func(*testing.T)
	}{
		{"a Cluster recovered from a Backup holds exactly its rows, and so does its replica", func(t *testing.T) {
			testRecoverFromBackup(t, w, ns, b1)
		}},
		{"a Cluster recovered from a bucket alone, the source Cluster and Backups deleted, restores the newest backup over an interrupted restore", func(t *testing.T) {
			for _, n := range srcNodes {
				n.stop(t)
			}
			for _, obj := range []client.Object{
				&v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "src"}},
				&v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: b1.name}},
				&v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: b2.name}},
			} {
				must(t, w.env.Client.Delete(t.Context(), obj))
			}
			testRecoverFromSource(t, w, b2)
		}},
		{"a missing Backup, a missing backup directory, a corrupt archive and a target time before every backup stop with the condition and never serve", func(t *testing.T) {
			testRecoveryFailures(t, w, ns, b2)
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t) }) {
			t.Fatalf("step %q failed; later steps depend on it", s.name)
		}
	}
}

func startRecoveryWorld(t *testing.T) *recoveryWorld {
	w := &recoveryWorld{env: kubetest.StartT(t, kubetest.Options{}), s3: s3test.Start(t), bin: buildManager(t),
		pki: newPKI(t), prefix: "backups", nextHost: 20 + syscall.Getpid()%200}
	w.rootfs, w.base = rootFS(t)
	w.kubeconfig = w.env.KubeconfigFile(t)
	return w
}

// objectStore is the configuration Clusters and Backups carry for the test's bucket.
func (w *recoveryWorld) objectStore() v1alpha1.ObjectStoreConfiguration {
	return v1alpha1.ObjectStoreConfiguration{Bucket: w.s3.Bucket, Path: w.prefix, Endpoint: w.s3.Endpoint,
		Region: w.s3.Region, ForcePathStyle: true, Credentials: v1alpha1.S3Credentials{
			AccessKeyID:     v1alpha1.SecretKeySelector{Name: "s3", Key: "id"},
			SecretAccessKey: v1alpha1.SecretKeySelector{Name: "s3", Key: "secret"},
		}}
}

func (w *recoveryWorld) createStoreSecret(t *testing.T, ns string) {
	t.Helper()
	must(t, w.env.Client.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3"},
		Data: map[string][]byte{"id": []byte(w.s3.AccessKey), "secret": []byte(w.s3.SecretKey)}}))
}

// createCluster creates a Cluster without semi-sync and sets its first instance as the target;
// edit, when given, changes the spec first.
func (w *recoveryWorld) createCluster(t *testing.T, ns, name string, instances int32, rec *v1alpha1.BootstrapRecovery,
	edit ...func(*v1alpha1.ClusterSpec)) {
	t.Helper()
	c := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ClusterSpec{Instances: instances, MaxSwitchoverDelay: 60,
			Storage: v1alpha1.StorageConfiguration{Size: resource.MustParse("1Gi")}}}
	if rec != nil {
		c.Spec.Bootstrap = &v1alpha1.BootstrapConfiguration{Recovery: rec}
	}
	for _, e := range edit {
		e(&c.Spec)
	}
	must(t, w.env.Client.Create(t.Context(), c))
	key := types.NamespacedName{Namespace: ns, Name: name}
	eventually(t, 10*time.Second, "targetPrimary of "+name, func() bool {
		var c v1alpha1.Cluster
		if err := w.env.Client.Get(t.Context(), key, &c); err != nil {
			return false
		}
		now := metav1.Now()
		c.Status.TargetPrimary, c.Status.TargetPrimaryTimestamp, c.Status.LatestGeneratedNode = name+"-1", &now, instances
		return w.env.Client.Status().Update(t.Context(), &c) == nil
	})
	if c.Spec.Backup != nil && c.Spec.Backup.ObjectStore != nil {
		w.claimLocation(t, key)
	}
}

// claimLocation runs the operator's location reconciler on the Cluster, as the operator does
// before its primary archives or backs up: it claims the Cluster's location in the real bucket.
func (w *recoveryWorld) claimLocation(t *testing.T, key types.NamespacedName) {
	t.Helper()
	r := &location.Reconciler{Client: w.env.Client, APIReader: w.env.Client, Recorder: record.NewFakeRecorder(10), Clock: clock.RealClock{}}
	eventually(t, 10*time.Second, "the location of "+key.Name+" claimed", func() bool {
		_, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: key})
		var c v1alpha1.Cluster
		return err == nil && w.env.Client.Get(t.Context(), key, &c) == nil && c.HoldsObjectStoreLocation()
	})
}

// startNodes starts the instance managers <cluster>-1..n, each on its own loopback address;
// prepare, when given, runs on each node's directories first.
func (w *recoveryWorld) startNodes(t *testing.T, ns, cluster string, n int, prepare ...func(*node)) []*node {
	t.Helper()
	var nodes []*node
	for i := 1; i <= n; i++ {
		w.nextHost++
		nd := newNode(t, w.pki, w.base, fmt.Sprintf("%s-%d", cluster, i), net.IPv4(127, 0, 0, byte(w.nextHost)).String())
		nd.args = []string{"--cluster", cluster}
		for _, f := range prepare {
			f(nd)
		}
		nodes = append(nodes, nd)
	}
	for _, nd := range nodes {
		nd.start(t, w.bin, w.rootfs, w.kubeconfig, ns, nodes)
	}
	return nodes
}

func (w *recoveryWorld) cluster(t *testing.T, ns, name string) *v1alpha1.Cluster {
	t.Helper()
	var c v1alpha1.Cluster
	must(t, w.env.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, &c))
	return &c
}

// waitPrimary waits until primary is recorded, writable and ready, and each replica read-only,
// replicating healthily with everything the primary executed.
func (w *recoveryWorld) waitPrimary(t *testing.T, ns, cluster string, primary *node, replicas ...*node) {
	t.Helper()
	eventually(t, 180*time.Second, primary.name+" primary of "+cluster, func() bool {
		if w.cluster(t, ns, cluster).Status.CurrentPrimary != primary.name {
			return false
		}
		pst := primary.status(t)
		if pst == nil || !pst.Writable() || primary.probe("/readyz") != 200 {
			return false
		}
		for _, r := range replicas {
			st := r.status(t)
			if st == nil || st.Writable() || st.Replication == nil || !st.Replication.Healthy() ||
				!st.GTIDExecuted.Contains(pst.GTIDExecuted) || r.probe("/readyz") != 200 {
				return false
			}
		}
		return true
	})
}

// backUpSource runs the source Cluster "src" (one instance), writes rows, and takes two clone
// backups with rows written between them and after the second; each has a completed Backup
// object, as the backup controller records it.
func (w *recoveryWorld) backUpSource(t *testing.T, ns string) (b1, b2 sourceBackup, nodes []*node) {
	t.Helper()
	w.createCluster(t, ns, "src", 1, nil)
	nodes = w.startNodes(t, ns, "src", 1)
	p := nodes[0]
	w.waitPrimary(t, ns, "src", p)
	p.exec(t, "CREATE DATABASE IF NOT EXISTS app",
		"CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(64))",
		"CREATE TABLE app.doc (id INT PRIMARY KEY, body JSON, pad BLOB)")
	write := func(from, to int) {
		for i := from; i < to; i++ {
			p.exec(t, fmt.Sprintf("INSERT INTO app.t VALUES (%d, 'row-%d')", i, i),
				fmt.Sprintf(`INSERT INTO app.doc VALUES (%d, '{"n": %d}', RANDOM_BYTES(512))`, i, i))
		}
	}
	take := func(name string) sourceBackup { return w.takeBackup(t, ns, "src", p, name) }
	write(0, 150)
	b1 = take("src-b1")
	write(150, 260)
	time.Sleep(1100 * time.Millisecond) // a new backup id, a later stoppedAt
	b2 = take("src-b2")
	write(260, 300) // in no backup
	if maps.Equal(b1.sums, b2.sums) {
		t.Fatal("the two backups hold the same rows; the test could not tell them apart")
	}
	return b1, b2, nodes
}

// takeBackup takes a clone backup of p as a backup Job would, uploads it, and creates its
// completed Backup object.
func (w *recoveryWorld) takeBackup(t *testing.T, ns, cluster string, p *node, name string) sourceBackup {
	t.Helper()
	store := backuptest.Store(t, w.s3, w.s3.Endpoint, w.prefix)
	sums, _, err := backuptest.Checksums(t.Context(), p.db)
	must(t, err)
	mysqld := backuptest.MysqldT(t)
	prod, err := backup.NewCloneProducer(backup.CloneConfig{Mysqld: mysqld, ScratchDir: backuptest.Scratch(t, mysqld),
		Donor: backup.Donor{Host: p.host, Port: p.mysqlPort, User: specs.UserBackup, Password: "backup-pw",
			CAFile:   filepath.Join(p.dir, "client-tls", "ca.crt"),
			CertFile: filepath.Join(p.dir, "client-tls", "tls.crt"), KeyFile: filepath.Join(p.dir, "client-tls", "tls.key")}})
	must(t, err)
	ref := objectstore.BackupRef{Cluster: cluster, Name: name, ID: time.Now().UTC().Format("20060102150405")}
	md, err := backup.Run(t.Context(), store, ref, backup.Owner{Namespace: ns}, prod)
	must(t, err)
	w.createCompletedBackup(t, ns, store, md)
	return sourceBackup{name: name, md: md, sums: sums}
}

// createCompletedBackup creates the Backup object of md with the status a completed backup has.
func (w *recoveryWorld) createCompletedBackup(t *testing.T, ns string, store *objectstore.Client, md *objectstore.Metadata) {
	t.Helper()
	b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: md.BackupName},
		Spec: v1alpha1.BackupSpec{Cluster: v1alpha1.LocalObjectReference{Name: md.Cluster}}}
	must(t, w.env.Client.Create(t.Context(), b))
	store2 := w.objectStore()
	started, stopped := metav1.NewTime(md.StartedAt), metav1.NewTime(md.StoppedAt)
	b.Status = v1alpha1.BackupStatus{Phase: v1alpha1.BackupPhaseCompleted, BackupID: md.BackupID,
		Endpoint: w.s3.Endpoint, Bucket: w.s3.Bucket, DestinationPath: store.BackupDir(md.Ref()), ObjectStore: &store2,
		Checksum: md.Checksum(), Size: md.Size, GTIDExecuted: md.GTIDExecuted, ServerVersion: md.ServerVersion,
		StartedAt: &started, CompletedAt: &stopped}
	must(t, w.env.Client.Status().Update(t.Context(), b))
}

// writeWatch polls a node's server until stopped and records whether it was ever writable, and
// whether the Cluster's Recovered condition was already True the first time it was.
type writeWatch struct {
	mu                sync.Mutex
	writable          bool
	recoveredAtFirst  bool
	answered          bool
	stop              chan struct{}
	done              chan struct{}
	node, ns, cluster string
}

func (w *recoveryWorld) watchWrites(t *testing.T, ns, cluster string, n *node) *writeWatch {
	ww := &writeWatch{stop: make(chan struct{}), done: make(chan struct{}), node: n.name, ns: ns, cluster: cluster}
	go func() {
		defer close(ww.done)
		for stopping := false; !stopping; {
			// Once asked to stop, one last look: the caller has just seen the node in some
			// state (writable) and a poll 50 ms old may predate it.
			select {
			case <-ww.stop:
				stopping = true
			case <-time.After(50 * time.Millisecond):
			}
			st := n.status(t)
			if st == nil {
				continue
			}
			ww.mu.Lock()
			ww.answered = true
			first := st.Writable() && !ww.writable
			ww.mu.Unlock()
			if !first {
				continue
			}
			var c v1alpha1.Cluster
			err := w.env.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: cluster}, &c)
			cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionRecovered)
			ww.mu.Lock()
			ww.writable = true
			ww.recoveredAtFirst = err == nil && cond != nil && cond.Status == metav1.ConditionTrue && c.Status.Recovery != nil
			ww.mu.Unlock()
		}
	}()
	t.Cleanup(ww.end)
	return ww
}

func (ww *writeWatch) end() {
	select {
	case <-ww.stop:
	default:
		close(ww.stop)
	}
	<-ww.done
}

func (ww *writeWatch) result() (answered, writable, recoveredFirst bool) {
	ww.end()
	ww.mu.Lock()
	defer ww.mu.Unlock()
	return ww.answered, ww.writable, ww.recoveredAtFirst
}

// checkRestored checks that every node holds exactly the backup's tables and at least its GTIDs,
// and that the Cluster's status records the backup.
func (w *recoveryWorld) checkRestored(t *testing.T, ns, cluster string, b sourceBackup, nodes []*node) {
	t.Helper()
	for _, n := range nodes {
		sums, executed, err := backuptest.Checksums(t.Context(), n.db)
		must(t, err)
		if !maps.Equal(sums, b.sums) {
			t.Errorf("%s: checksums differ from backup %s:\nrestored %v\nbackup   %v", n.name, b.name, sums, b.sums)
		}
		if !gtid.MustParse(executed).Contains(gtid.MustParse(b.md.GTIDExecuted)) {
			t.Errorf("%s: gtid_executed %q lacks the backup's %q", n.name, executed, b.md.GTIDExecuted)
		}
		var rows int
		must(t, n.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM app.t").Scan(&rows))
		t.Logf("%s: %d rows in app.t, checksums equal to %s's", n.name, rows, b.name)
	}
	c := w.cluster(t, ns, cluster)
	rs := c.Status.Recovery
	if rs == nil {
		t.Fatalf("status.recovery is empty")
	}
	wantPath := objectstore.BackupDir(w.prefix, b.md.Ref())
	if rs.Path != wantPath || rs.GTIDExecuted != b.md.GTIDExecuted || rs.Instance != cluster+"-1" ||
		rs.BackupStoppedAt == nil || !rs.BackupStoppedAt.Time.Equal(b.md.StoppedAt.Truncate(time.Second)) || rs.RecoveredAt == nil {
		t.Errorf("status.recovery = %+v, want path %s, gtid %s, instance %s-1, stoppedAt %s", rs, wantPath,
			b.md.GTIDExecuted, cluster, b.md.StoppedAt)
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionRecovered)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != v1alpha1.ReasonRecoveryRestored {
		t.Errorf("condition Recovered = %+v, want True/%s", cond, v1alpha1.ReasonRecoveryRestored)
	}
	w.waitEvent(t, ns, cluster, v1alpha1.EventBackupRestored, corev1.EventTypeNormal)
}

// waitEvent waits for an Event of that reason and type on the Cluster.
func (w *recoveryWorld) waitEvent(t *testing.T, ns, cluster, reason, typ string) {
	t.Helper()
	eventually(t, 30*time.Second, "Event "+reason+" on "+cluster, func() bool {
		var list corev1.EventList
		if err := w.env.Client.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == cluster && e.InvolvedObject.Kind == "Cluster" && e.Reason == reason && e.Type == typ {
				return true
			}
		}
		return false
	})
}

func testRecoverFromBackup(t *testing.T, w *recoveryWorld, ns string, b sourceBackup) {
	w.createCluster(t, ns, "rec", 2, &v1alpha1.BootstrapRecovery{Backup: &v1alpha1.LocalObjectReference{Name: b.name}})
	begin := time.Now()
	// The backup holds src's root and application owner's passwords; rec has its own, which its
	// manager logs in with and its applications connect with.
	nodes := w.startNodes(t, ns, "rec", 2, withRootPassword(t, "rec-root-pw"), withAppPassword(t, "rec-app-pw"))
	watch := w.watchWrites(t, ns, "rec", nodes[0])
	w.waitPrimary(t, ns, "rec", nodes[0], nodes[1])
	t.Logf("rec-1 restored from %s and primary, rec-2 cloned, %s after the managers started", b.name,
		time.Since(begin).Round(time.Millisecond))
	_, writable, recoveredFirst := watch.result()
	if !writable || !recoveredFirst {
		t.Errorf("rec-1 writable %v; the Recovered condition True when it first was: %v (want both)", writable, recoveredFirst)
	}
	w.checkRestored(t, ns, "rec", b, nodes)
	for pw, want := range map[string]bool{"rec-app-pw": true, passwords["app"]: false} {
		cfg := driver.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "app", pw, "unix", nodes[0].socket()
		err := openDB(t, cfg).PingContext(t.Context())
		if (err == nil) != want {
			t.Errorf("the application owner with the password of %s: %v; want it to log in: %v",
				map[bool]string{true: "rec's Secret", false: "src's Secret (the backup's)"}[want], err, want)
		}
	}
	// The recovered primary takes writes, with its own accounts, and its replica follows.
	nodes[0].exec(t, "INSERT INTO app.t VALUES (10000, 'after recovery')")
	eventually(t, 30*time.Second, "the write after recovery on rec-2", func() bool {
		var n int
		return nodes[1].db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM app.t WHERE id = 10000").Scan(&n) == nil && n == 1
	})
}

func testRecoverFromSource(t *testing.T, w *recoveryWorld, newest sourceBackup) {
	ns := w.env.NewNamespace(t)
	w.createStoreSecret(t, ns)
	w.createCluster(t, ns, "lost", 1, &v1alpha1.BootstrapRecovery{Source: &v1alpha1.RecoverySource{
		ClusterName: "src", ObjectStore: w.objectStore()}})
	// lost-1's data directory is what a restore interrupted by a crash leaves: the marker of the
	// unfinished restore and some of the files, mysql.ibd among them. It must be discarded and
	// restored again, never started.
	interrupted := func(n *node) {
		data := filepath.Join(n.dir, "data")
		must(t, os.MkdirAll(data, 0o750))
		for _, f := range []string{".cnm-clone-pending", "mysql.ibd", "ibdata1"} {
			must(t, os.WriteFile(filepath.Join(data, f), []byte("half"), 0o640))
		}
	}
	nodes := w.startNodes(t, ns, "lost", 1, interrupted, withRootPassword(t, "lost-root-pw"))
	watch := w.watchWrites(t, ns, "lost", nodes[0])
	w.waitPrimary(t, ns, "lost", nodes[0])
	_, writable, recoveredFirst := watch.result()
	if !writable || !recoveredFirst {
		t.Errorf("lost-1 writable %v; the Recovered condition True when it first was: %v (want both)", writable, recoveredFirst)
	}
	w.checkRestored(t, ns, "lost", newest, nodes)
	if got := w.cluster(t, ns, "lost").Status.Recovery.Backup; got != newest.name {
		t.Errorf("status.recovery.backup = %q, want the newest backup %s", got, newest.name)
	}
}

func testRecoveryFailures(t *testing.T, w *recoveryWorld, ns string, newest sourceBackup) {
	store := backuptest.Store(t, w.s3, w.s3.Endpoint, w.prefix)
	// A completed Backup object whose directory holds nothing.
	ghost := *newest.md
	ghost.BackupName, ghost.BackupID = "ghost", "1"
	w.createCompletedBackup(t, ns, store, &ghost)
	// The newest backup's archive with one byte flipped: a source recovery picks it.
	archive := filepath.Join(w.s3.Dir, w.s3.Bucket, filepath.FromSlash(objectstore.ArchiveKey(w.prefix, newest.md.Ref(), "tar.zst")))
	data, err := os.ReadFile(archive)
	must(t, err)
	data[len(data)/2] ^= 0x5a
	must(t, os.WriteFile(archive, data, 0o644))

	w.expectRecoveryFailures(t, ns, []failingRecovery{
		{"nobackup", v1alpha1.ReasonRecoveryBackupNotFound, &v1alpha1.BootstrapRecovery{Backup: &v1alpha1.LocalObjectReference{Name: "never-taken"}}},
		{"ghost", v1alpha1.ReasonRecoveryBackupNotFound, &v1alpha1.BootstrapRecovery{Backup: &v1alpha1.LocalObjectReference{Name: "ghost"}}},
		{"corrupt", v1alpha1.ReasonRecoveryVerificationFailed, &v1alpha1.BootstrapRecovery{Source: &v1alpha1.RecoverySource{
			ClusterName: "src", ObjectStore: w.objectStore()}}},
		{"pitr", v1alpha1.ReasonRecoveryPointInTimeUnavailable, &v1alpha1.BootstrapRecovery{
			Source: &v1alpha1.RecoverySource{ClusterName: "src", ObjectStore: w.objectStore()},
			RecoveryTarget: &v1alpha1.RecoveryTarget{
				TargetTime: newest.md.StartedAt.Add(-time.Hour).UTC().Format(time.RFC3339Nano)}}},
	})
}

// failingRecovery is a recovery Cluster whose restore must fail with reason.
type failingRecovery struct {
	cluster, reason string
	rec             *v1alpha1.BootstrapRecovery
}

// expectRecoveryFailures creates each Cluster with two instances and checks that its
// restore fails with the reason, a Warning Event, no primary, no mysqld ever answering, and an
// empty data directory.
func (w *recoveryWorld) expectRecoveryFailures(t *testing.T, ns string, cases []failingRecovery) {
	t.Helper()
	nodes := map[string]*node{}
	watches := map[string]*writeWatch{}
	for _, tc := range cases {
		w.createCluster(t, ns, tc.cluster, 2, tc.rec)
		nn := w.startNodes(t, ns, tc.cluster, 2)
		nodes[tc.cluster] = nn[0]
		watches[tc.cluster] = w.watchWrites(t, ns, tc.cluster, nn[0])
		watches[tc.cluster+"/replica"] = w.watchWrites(t, ns, tc.cluster, nn[1])
	}
	for _, tc := range cases {
		t.Run(tc.cluster, func(t *testing.T) {
			eventually(t, 60*time.Second, "condition Recovered False/"+tc.reason+" on "+tc.cluster, func() bool {
				cond := meta.FindStatusCondition(w.cluster(t, ns, tc.cluster).Status.Conditions, v1alpha1.ConditionRecovered)
				return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == tc.reason
			})
			w.waitEvent(t, ns, tc.cluster, v1alpha1.EventRecoveryFailed, corev1.EventTypeWarning)
			cond := meta.FindStatusCondition(w.cluster(t, ns, tc.cluster).Status.Conditions, v1alpha1.ConditionRecovered)
			t.Logf("%s: %s: %s", tc.cluster, cond.Reason, cond.Message)
		})
	}
	// Past the first retry, nothing ever served.
	time.Sleep(7 * time.Second)
	for _, tc := range cases {
		c := w.cluster(t, ns, tc.cluster)
		if c.Status.CurrentPrimary != "" || c.Status.Recovery != nil {
			t.Errorf("%s: currentPrimary %q, recovery %+v: a failed recovery must not produce a primary",
				tc.cluster, c.Status.CurrentPrimary, c.Status.Recovery)
		}
		for _, key := range []string{tc.cluster, tc.cluster + "/replica"} {
			if answered, writable, _ := watches[key].result(); answered || writable {
				t.Errorf("%s: mysqld answered %v, writable %v: an instance of a failed recovery must never run", key, answered, writable)
			}
		}
		// A retry may be unpacking again: the directory returns to empty (but the marker of a
		// restore in progress) and never holds a server that started.
		data := filepath.Join(nodes[tc.cluster].dir, "data")
		eventually(t, 30*time.Second, tc.cluster+": an empty data directory", func() bool {
			entries, err := os.ReadDir(data)
			if errors.Is(err, fs.ErrNotExist) {
				return true
			}
			return err == nil && (len(entries) == 0 || len(entries) == 1 && entries[0].Name() == ".cnm-clone-pending")
		})
	}
}
