package retention_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/ctrlworld"
)

// retWorld is a namespace on the real API server and a real versitygw behind a fault-injecting
// proxy. Clusters reach the store through the proxy; the test reads the store directly. The fake
// clock starts two days after the wall clock, so directories written now (dated by the store)
// are already past the 24 hours grace of incomplete uploads.
type retWorld struct {
	*ctrlworld.World
	store *ctrlworld.Store
	// rec is the reconciler under test; its failure count lives as long as the world.
	rec *retention.Reconciler
}

func newRetWorld(t *testing.T) *retWorld {
	t.Helper()
	w := &retWorld{World: ctrlworld.New(t, shared,
		ctrlworld.ClockAt(time.Now().Add(48*time.Hour).UTC().Truncate(time.Second)))}
	w.store = w.StartStore("s3", "")
	w.rec = &retention.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock,
		OpenStore: func(cfg objectstore.Config) (*objectstore.Client, error) {
			cfg.MaxRetries = 1 // a store that is down fails the pass at once
			return objectstore.New(cfg)
		}}
	return w
}

// sameStoreElsewhere is a world in a new namespace of the same API server, with its own s3
// Secret, sharing w's store, proxy, clock, recorder and reconciler: a Cluster there of the same
// name as one in w, with the same object store, writes to the same directory.
func (w *retWorld) sameStoreElsewhere() *retWorld {
	w.T.Helper()
	o := *w
	o.World = w.Elsewhere()
	o.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3", Namespace: o.NS},
		Data: map[string][]byte{"id": []byte(w.store.S3.AccessKey), "secret": []byte(w.store.S3.SecretKey)}})
	return &o
}

// createCluster creates a Cluster with the window policy (none when ""), an object store through
// the proxy, and currentPrimary <name>-1 unless primary is false.
func (w *retWorld) createCluster(name, policy string, primary bool) {
	w.T.Helper()
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Backup:  &v1.BackupConfiguration{RetentionPolicy: policy, ObjectStore: w.store.Config("s3", "ctl", true)}}}
	w.Create(c)
	c.Status.LatestGeneratedNode = 1 // the first instance, as the Cluster controller records it
	if primary {
		c.Status.CurrentPrimary = name + "-1"
	}
	w.UpdateStatus(c)
	w.ClaimLocation(name, nil)
}

// createRecoveryCluster creates a Cluster bootstrapped from backup, without a policy.
func (w *retWorld) createRecoveryCluster(name, backup string) {
	w.T.Helper()
	w.Create(&v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
			Storage:   v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Bootstrap: &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{Backup: &v1.LocalObjectReference{Name: backup}}}}})
}

// direct is a client of the versitygw bucket itself, not through the proxy.
func (w *retWorld) direct() *objectstore.Client {
	w.T.Helper()
	s, err := w.store.Direct("ctl")
	return check.Value(w.T, s, err)
}

// backupID is the id the Backup controller gives a backup started at t.
func backupID(t time.Time) string { return t.UTC().Format("20060102T150405Z") }

// uploadBackup uploads a complete backup of cluster that ran for a minute and completed age before
// the fake now, its metadata.json naming the world's namespace as a backup Job writes it, and
// creates its completed Backup object, as the Backup controller leaves it.
func (w *retWorld) uploadBackup(cluster, name string, age time.Duration) objectstore.BackupRef {
	w.T.Helper()
	done := w.Clock.Now().Add(-age)
	ref := objectstore.BackupRef{Cluster: cluster, Name: name, ID: backupID(done.Add(-time.Minute))}
	data := bytes.Repeat([]byte(name), 500)
	sum := sha256.Sum256(data)
	md, err := w.direct().UploadBackup(w.Ctx, objectstore.UploadRequest{Backup: ref, Namespace: w.NS, Method: "clone",
		Format: objectstore.FormatTar, Compression: objectstore.CompressionZstd, Archive: bytes.NewReader(data),
		Finish: func() (objectstore.ProducerResult, error) {
			return objectstore.ProducerResult{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]),
				GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", ServerVersion: "9.7.4",
				StartedAt: done.Add(-time.Minute), StoppedAt: done}, nil
		}})
	if err != nil {
		w.T.Fatalf("uploading %s: %v", name, err)
	}
	w.createBackupObject(name, cluster, ref, v1.BackupPhaseCompleted)
	b := w.backup(name)
	b.Status.Checksum, b.Status.Size = md.Checksum(), md.Size
	b.Status.CompletedAt = &metav1.Time{Time: done}
	w.UpdateStatus(b)
	return ref
}

// createBackupObject creates a Backup of cluster in phase whose status names ref's directory.
func (w *retWorld) createBackupObject(name, cluster string, ref objectstore.BackupRef, phase v1.BackupPhase) {
	w.T.Helper()
	b := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: cluster}}}
	w.Create(b)
	b.Status = v1.BackupStatus{Phase: phase, InstanceName: cluster + "-1", JobName: name, BackupID: ref.ID,
		Endpoint: w.store.Proxy.URL, Bucket: w.store.S3.Bucket, DestinationPath: objectstore.BackupDir("ctl", ref)}
	w.UpdateStatus(b)
}

// putIncomplete writes an archive without metadata.json, as an interrupted upload leaves it.
func (w *retWorld) putIncomplete(ref objectstore.BackupRef) {
	w.T.Helper()
	key := objectstore.ArchiveKey("ctl", ref, "tar.zst")
	if _, err := w.store.S3.Client().PutObject(w.Ctx, w.store.S3.Bucket, key, bytes.NewReader([]byte("partial")), 7,
		minio.PutObjectOptions{}); err != nil {
		w.T.Fatal(err)
	}
}

// dirs lists cluster's backup directories as "name" (complete) or "name (incomplete)", sorted.
func (w *retWorld) dirs(cluster string) []string {
	w.T.Helper()
	entries, err := w.direct().ListBackups(w.Ctx, cluster)
	if err != nil {
		w.T.Fatal(err)
	}
	out := []string{}
	for _, e := range entries {
		if e.Complete {
			out = append(out, e.Ref.Name)
		} else {
			out = append(out, e.Ref.Name+" (incomplete)")
		}
	}
	slices.Sort(out)
	return out
}

func (w *retWorld) wantDirs(cluster string, want ...string) {
	w.T.Helper()
	slices.Sort(want)
	if got := w.dirs(cluster); !slices.Equal(got, want) {
		w.T.Fatalf("directories of %s: %q, want %q", cluster, got, want)
	}
}

func (w *retWorld) reconcile(cluster string) (ctrl.Result, error) {
	return w.rec.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key(cluster)})
}

// reconcileOK reconciles and fails the test on an error.
func (w *retWorld) reconcileOK(cluster string) ctrl.Result {
	w.T.Helper()
	res, err := w.reconcile(cluster)
	if err != nil {
		w.T.Fatalf("reconcile %s: %v", cluster, err)
	}
	return res
}

func (w *retWorld) cluster(name string) *v1.Cluster { return ctrlworld.Get[v1.Cluster](w.World, name) }

func (w *retWorld) backup(name string) *v1.Backup { return ctrlworld.Get[v1.Backup](w.World, name) }

// wantStamp checks status.lastRetentionRunTime: at want, or absent when want is zero.
func (w *retWorld) wantStamp(cluster string, want time.Time) {
	w.T.Helper()
	got := w.cluster(cluster).Status.LastRetentionRunTime
	switch {
	case want.IsZero() && got != nil:
		w.T.Fatalf("lastRetentionRunTime %v, want none", got)
	case !want.IsZero() && (got == nil || !got.Time.Equal(want)):
		w.T.Fatalf("lastRetentionRunTime %v, want %v", got, want)
	}
}

// artifacts is the reason of the Backup's ArtifactsAvailable condition ("" when absent), the
// column `kubectl get backups` shows.
func (w *retWorld) artifacts(name string) string {
	w.T.Helper()
	c := meta.FindStatusCondition(w.backup(name).Status.Conditions, v1.BackupArtifactsAvailable)
	if c == nil {
		return ""
	}
	if c.Status != metav1.ConditionFalse {
		w.T.Fatalf("Backup %s: ArtifactsAvailable is %s", name, c.Status)
	}
	return c.Reason
}

// events drains the recorded Events, one a line.
func (w *retWorld) events() string { return strings.Join(w.Events(), "\n") }
