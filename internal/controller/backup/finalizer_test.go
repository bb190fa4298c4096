package backup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/scheduledbackup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
)

// TestBackupFinalizer drives the remote-cleanup finalizer on the real API server (with the
// garbage collector) and a real versitygw; the subtests share one namespace and object store,
// each with its own Backups.
func TestBackupFinalizer(t *testing.T) {
	w := newBkWorld(t)
	t.Run("deletionPolicy delete on the Backup: its remote directory is deleted, then the object goes", w.testDeleteOnBackup)
	t.Run("deletionPolicy delete inherited from the Cluster", w.testDeleteFromCluster)
	t.Run("deletionPolicy keep (the default): the object goes, the remote data stays", w.testKeep)
	t.Run("a ScheduledBackup's deletionPolicy delete is inherited by its Backups", w.testFromSchedule)
	t.Run("patched to keep before deletion, as the schedule's pruning does: the remote data stays", w.testPatchedToKeep)
	t.Run("the Cluster already deleted: cleanup uses the configuration the Backup recorded", w.testClusterGone)
	t.Run("a Backup recorded before status.objectStore existed: its Cluster's configuration is used", w.testLegacyStatus)
	t.Run("the object store failing: condition, Warning and backoff, then cleaned up when it recovers", w.testStoreFailing)
	t.Run("the credentials gone: blocked with a Warning until the bypass annotation, which keeps the data", w.testBypass)
	t.Run("a Backup that never recorded a destination: the finalizer goes at once", w.testNeverRan)
	t.Run("deleted while running: the Job is deleted first, then the partial upload", w.testDeletedWhileRunning)
}

// createStoreCluster creates a Cluster with the object store (through the world's proxy when
// viaProxy), credentials from the Secret secret and a default deletion policy, and its ready
// primary Pod <name>-1.
func (w *bkWorld) createStoreCluster(name string, policy v1.DeletionPolicy, viaProxy bool, secret string) {
	w.T.Helper()
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Backup:  &v1.BackupConfiguration{DeletionPolicy: policy, ObjectStore: w.store.Config(secret, "fin", viaProxy)}}}
	w.Create(c)
	c.Status.CurrentPrimary, c.Status.LatestGeneratedNode = name+"-1", 1
	w.UpdateStatus(c)
	w.claimLocation(name)
	w.createReadyPod(name+"-1", name)
}

func (w *bkWorld) createPolicyBackup(name, cluster string, policy v1.DeletionPolicy, mutate ...func(*v1.Backup)) {
	w.T.Helper()
	b := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: cluster}, DeletionPolicy: policy,
			Timeout: &metav1.Duration{Duration: time.Hour}}}
	for _, m := range mutate {
		m(b)
	}
	w.Create(b)
}

// completeBackup runs a Backup through its Job to completed, with a real archive and
// metadata.json in the store.
func (w *bkWorld) completeBackup(name string) *v1.Backup {
	w.T.Helper()
	b := w.runUntil(name, v1.BackupPhaseRunning)
	md := w.uploadFor(b)
	w.finishPod(name, corev1.PodSucceeded, `{"checksum":"`+md.Checksum()+`"}`)
	b = w.runUntil(name, v1.BackupPhaseCompleted)
	if len(w.remoteKeys(b)) < 2 {
		w.T.Fatalf("the completed backup has no archive and metadata.json: %v", w.remoteKeys(b))
	}
	return b
}

// remoteKeys lists what the object store holds under the Backup's recorded directory.
func (w *bkWorld) remoteKeys(b *v1.Backup) []string {
	w.T.Helper()
	var keys []string
	for obj := range w.store.S3.Client().ListObjects(w.Ctx, w.store.S3.Bucket, minio.ListObjectsOptions{Prefix: b.Status.DestinationPath, Recursive: true}) {
		if obj.Err != nil {
			w.T.Fatalf("listing %s: %v", b.Status.DestinationPath, obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	return keys
}

func (w *bkWorld) hasFinalizer(name string) bool {
	w.T.Helper()
	return controllerutil.ContainsFinalizer(w.backup(name), v1.RemoteCleanupFinalizer)
}

func (w *bkWorld) deleteBackup(name string) {
	w.T.Helper()
	if err := w.Client.Delete(w.Ctx, &v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS}}); err != nil {
		w.T.Fatalf("deleting Backup %s: %v", name, err)
	}
}

// backupGone reports whether the Backup object no longer exists.
func (w *bkWorld) backupGone(name string) bool {
	w.T.Helper()
	err := w.Client.Get(w.Ctx, w.Key(name), &v1.Backup{})
	if err != nil && !apierrors.IsNotFound(err) {
		w.T.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}

// expectCleanedUp deletes the Backup, reconciles it once and checks that both the object and its
// remote directory are gone.
func (w *bkWorld) expectCleanedUp(b *v1.Backup) {
	w.T.Helper()
	w.deleteBackup(b.Name)
	w.reconcile(b.Name)
	if !w.backupGone(b.Name) {
		w.T.Fatalf("Backup %s still exists after its cleanup: %+v", b.Name, w.backup(b.Name).Status.Conditions)
	}
	if keys := w.remoteKeys(b); len(keys) != 0 {
		w.T.Errorf("remote objects left under %s: %v", b.Status.DestinationPath, keys)
	}
	if ev := w.events(); !strings.Contains(ev, "Normal RemoteCleanupDone") {
		w.T.Errorf("events %s", ev)
	}
}

// cleanupCondition returns the Backup's RemoteCleanup condition.
func (w *bkWorld) cleanupCondition(name string) *metav1.Condition {
	w.T.Helper()
	return meta.FindStatusCondition(w.backup(name).Status.Conditions, v1.BackupRemoteCleanup)
}

func (w *bkWorld) testDeleteOnBackup(t *testing.T) {
	w.T = t
	w.createPolicyBackup("fin-own", "db", v1.DeletionPolicyDelete)
	w.reconcile("fin-own")
	if !w.hasFinalizer("fin-own") {
		t.Fatal("a Backup with deletionPolicy delete has no finalizer")
	}
	b := w.completeBackup("fin-own")
	if c := meta.FindStatusCondition(b.Status.Conditions, v1.BackupArtifactsAvailable); c == nil ||
		c.Status != metav1.ConditionTrue || c.Reason != v1.ReasonArtifactsStored {
		t.Errorf("ArtifactsAvailable %+v, want True Stored", c)
	}
	if b.Status.ObjectStore == nil || b.Status.ObjectStore.Credentials.SecretAccessKey.Name != "s3" {
		t.Errorf("the object store configuration is not recorded: %+v", b.Status.ObjectStore)
	}
	if ev := w.events(); !strings.Contains(ev, "Normal RemoteCleanupEnabled") {
		t.Errorf("events %s", ev)
	}
	w.expectCleanedUp(b)
}

func (w *bkWorld) testDeleteFromCluster(t *testing.T) {
	w.T = t
	w.createStoreCluster("inh", v1.DeletionPolicyDelete, false, "s3")
	w.createPolicyBackup("fin-inh", "inh", "")
	w.reconcile("fin-inh")
	if !w.hasFinalizer("fin-inh") {
		t.Fatal("a Backup of a Cluster whose default is delete has no finalizer")
	}
	w.expectCleanedUp(w.completeBackup("fin-inh"))
}

func (w *bkWorld) testKeep(t *testing.T) {
	w.T = t
	w.createPolicyBackup("fin-keep", "db", "")
	b := w.completeBackup("fin-keep")
	if w.hasFinalizer("fin-keep") {
		t.Fatal("a Backup with the default keep carries the finalizer")
	}
	w.deleteBackup("fin-keep")
	w.Eventually("the kept Backup goes without the operator", func(context.Context) (bool, error) { return w.backupGone("fin-keep"), nil })
	if keys := w.remoteKeys(b); len(keys) < 2 {
		t.Errorf("remote objects %v, want the archive and metadata.json kept", keys)
	}
}

func (w *bkWorld) testFromSchedule(t *testing.T) {
	w.T = t
	w.Create(&v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: w.NS},
		Spec: v1.ScheduledBackupSpec{Schedule: "0 0 3 * * *", Cluster: v1.LocalObjectReference{Name: "db"},
			Immediate: ptr.To(true), DeletionPolicy: v1.DeletionPolicyDelete}})
	sr := &scheduledbackup.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock}
	if _, err := sr.Reconcile(w.Ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: w.NS, Name: "nightly"}}); err != nil {
		t.Fatal(err)
	}
	var list v1.BackupList
	check.Must(t, w.Client.List(w.Ctx, &list, client.InNamespace(w.NS), client.MatchingLabels{v1.ScheduledBackupLabel: "nightly"}))
	if len(list.Items) != 1 || list.Items[0].Spec.DeletionPolicy != v1.DeletionPolicyDelete {
		t.Fatalf("the schedule's Backups %+v, want one with deletionPolicy delete", list.Items)
	}
	name := list.Items[0].Name
	w.reconcile(name)
	if !w.hasFinalizer(name) {
		t.Fatal("the schedule's Backup has no finalizer")
	}
	w.expectCleanedUp(w.completeBackup(name))
}

func (w *bkWorld) testPatchedToKeep(t *testing.T) {
	w.T = t
	for _, name := range []string{"fin-pruned", "fin-raced"} {
		w.createPolicyBackup(name, "db", v1.DeletionPolicyDelete)
		b := w.completeBackup(name)
		old := b.DeepCopy()
		b.Spec.DeletionPolicy = v1.DeletionPolicyKeep
		check.Must(t, w.Client.Patch(w.Ctx, b, client.MergeFrom(old)))
		if name == "fin-pruned" {
			// The operator sees the keep before the deletion: the finalizer goes first.
			w.reconcile(name)
			if w.hasFinalizer(name) {
				t.Fatal("a Backup patched to keep still carries the finalizer")
			}
		}
		// fin-raced is deleted before the operator saw the keep: the spec decides at deletion.
		w.deleteBackup(name)
		w.reconcile(name)
		w.Eventually(name+" goes", func(context.Context) (bool, error) { return w.backupGone(name), nil })
		if keys := w.remoteKeys(b); len(keys) < 2 {
			t.Errorf("%s: remote objects %v, want them kept", name, keys)
		}
	}
	if ev := w.events(); !strings.Contains(ev, "Normal RemoteCleanupDisabled") || !strings.Contains(ev, "Normal RemoteObjectsKept") ||
		strings.Contains(ev, "RemoteCleanupDone") {
		t.Errorf("events %s", ev)
	}
}

func (w *bkWorld) testClusterGone(t *testing.T) {
	w.T = t
	w.createStoreCluster("ephemeral", v1.DeletionPolicyDelete, false, "s3")
	var c v1.Cluster
	check.Must(t, w.Client.Get(w.Ctx, client.ObjectKey{Namespace: w.NS, Name: "ephemeral"}, &c))
	w.createPolicyBackup("fin-orphaned", "ephemeral", "", func(b *v1.Backup) {
		b.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "Cluster",
			Name: c.Name, UID: c.UID, Controller: ptr.To(true)}}
	})
	b := w.completeBackup("fin-orphaned")
	check.Must(t, w.Client.Delete(w.Ctx, &c, client.PropagationPolicy("Background")))
	w.Eventually("the garbage collector deletes the Cluster's Backup", func(context.Context) (bool, error) {
		return w.backup("fin-orphaned").DeletionTimestamp != nil, nil
	})
	w.reconcile("fin-orphaned")
	if !w.backupGone("fin-orphaned") {
		t.Fatalf("the Backup of a deleted Cluster was not cleaned up: %+v", w.cleanupCondition("fin-orphaned"))
	}
	if keys := w.remoteKeys(b); len(keys) != 0 {
		t.Errorf("remote objects left: %v", keys)
	}
}

func (w *bkWorld) testLegacyStatus(t *testing.T) {
	w.T = t
	w.createPolicyBackup("fin-legacy", "db", v1.DeletionPolicyDelete)
	b := w.completeBackup("fin-legacy")
	old := b.DeepCopy()
	b.Status.ObjectStore = nil
	check.Must(t, w.Client.Status().Patch(w.Ctx, b, client.MergeFrom(old)))
	if w.backup("fin-legacy").Status.ObjectStore != nil {
		t.Fatal("status.objectStore was not cleared")
	}
	w.expectCleanedUp(b)
}

func (w *bkWorld) testStoreFailing(t *testing.T) {
	w.T = t
	proxy := w.store.Proxy
	w.createStoreCluster("flaky", "", true, "s3")
	w.createPolicyBackup("fin-flaky", "flaky", v1.DeletionPolicyDelete)
	b := w.completeBackup("fin-flaky")
	w.events()
	proxy.Inject(s3proxy.Fault{Match: s3proxy.All(), Action: s3proxy.Status(503)})
	w.deleteBackup("fin-flaky")
	res := w.reconcile("fin-flaky")
	if res.RequeueAfter < 5*time.Second {
		t.Errorf("a failed cleanup is retried after %s: that loops hot", res.RequeueAfter)
	}
	c := w.cleanupCondition("fin-flaky")
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1.ReasonCleanupFailed {
		t.Fatalf("RemoteCleanup %+v, want False CleanupFailed", c)
	}
	if !w.hasFinalizer("fin-flaky") || len(w.remoteKeys(b)) < 2 {
		t.Fatal("a failed cleanup lost the finalizer or the data")
	}
	if ev := w.events(); !strings.Contains(ev, "Warning RemoteCleanupFailed") {
		t.Errorf("events %s", ev)
	}
	w.Clock.Step(time.Minute)
	if res := w.reconcile("fin-flaky"); res.RequeueAfter < time.Minute {
		t.Errorf("still failing after a minute: retried after %s, want the wait to grow", res.RequeueAfter)
	}
	proxy.ClearFaults()
	w.expectCleanedUp(b)
}

func (w *bkWorld) testBypass(t *testing.T) {
	w.T = t
	w.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-doomed", Namespace: w.NS},
		Data: map[string][]byte{"id": []byte(w.store.S3.AccessKey), "secret": []byte(w.store.S3.SecretKey)}})
	w.createStoreCluster("lost", "", false, "s3-doomed")
	w.createPolicyBackup("fin-lost", "lost", v1.DeletionPolicyDelete)
	b := w.completeBackup("fin-lost")
	check.Must(t, w.Client.Delete(w.Ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-doomed", Namespace: w.NS}}))
	w.events()
	w.deleteBackup("fin-lost")
	if res := w.reconcile("fin-lost"); res.RequeueAfter < 5*time.Second {
		t.Errorf("retried after %s", res.RequeueAfter)
	}
	if c := w.cleanupCondition("fin-lost"); c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1.ReasonCleanupUnresolved ||
		!strings.Contains(c.Message, "s3-doomed") {
		t.Fatalf("RemoteCleanup %+v, want False StoreUnresolved naming the Secret", c)
	}
	if ev := w.events(); !strings.Contains(ev, "Warning RemoteCleanupBlocked") || !strings.Contains(ev, v1.RemoteCleanupBypassAnnotation+"=true") {
		t.Errorf("events %s", ev)
	}
	cur := w.backup("fin-lost")
	old := cur.DeepCopy()
	cur.Annotations = map[string]string{v1.RemoteCleanupBypassAnnotation: "true"}
	check.Must(t, w.Client.Patch(w.Ctx, cur, client.MergeFrom(old)))
	w.reconcile("fin-lost")
	if !w.backupGone("fin-lost") {
		t.Fatal("the bypass annotation did not let the Backup go")
	}
	if keys := w.remoteKeys(b); len(keys) < 2 {
		t.Errorf("remote objects %v, want them kept by the bypass", keys)
	}
	if ev := w.events(); !strings.Contains(ev, "Normal RemoteCleanupBypassed") {
		t.Errorf("events %s", ev)
	}
}

func (w *bkWorld) testNeverRan(t *testing.T) {
	w.T = t
	w.createPolicyBackup("fin-never", "missing", v1.DeletionPolicyDelete)
	w.reconcile("fin-never")
	if b := w.backup("fin-never"); b.Status.Phase != v1.BackupPhaseFailed || b.Status.DestinationPath != "" || !w.hasFinalizer("fin-never") {
		t.Fatalf("status %+v finalizers %v, want failed without a destination, with the finalizer", b.Status, b.Finalizers)
	}
	w.deleteBackup("fin-never")
	w.reconcile("fin-never")
	if !w.backupGone("fin-never") {
		t.Fatal("a Backup that never wrote anything is held by its finalizer")
	}
}

func (w *bkWorld) testDeletedWhileRunning(t *testing.T) {
	w.T = t
	w.createPolicyBackup("fin-running", "db", v1.DeletionPolicyDelete)
	b := w.runUntil("fin-running", v1.BackupPhaseRunning)
	partial := b.Status.DestinationPath + "backup.tar.zst"
	if _, err := w.store.S3.Client().PutObject(w.Ctx, w.store.S3.Bucket, partial, strings.NewReader("half an archive"), -1,
		minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	w.deleteBackup("fin-running")
	w.reconcile("fin-running")
	if c := w.cleanupCondition("fin-running"); c == nil || c.Reason != v1.ReasonCleanupWaitingForJob {
		t.Fatalf("RemoteCleanup %+v, want WaitingForJob", c)
	}
	if len(w.remoteKeys(b)) != 1 {
		t.Fatal("the partial upload was deleted while its Job could still write")
	}
	w.Eventually("the running Job is deleted", func(context.Context) (bool, error) { return w.job("fin-running") == nil, nil })
	w.reconcile("fin-running")
	if !w.backupGone("fin-running") {
		t.Fatalf("the Backup is still there: %+v", w.cleanupCondition("fin-running"))
	}
	if keys := w.remoteKeys(b); len(keys) != 0 {
		t.Errorf("the partial upload is left: %v", keys)
	}
}
