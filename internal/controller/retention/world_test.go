package controller_test

import (
	"bytes"
	"context"
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
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// retWorld is a namespace on the real API server and a real versitygw behind a fault-injecting
// proxy. Clusters reach the store through the proxy; the test reads the store directly. The fake
// clock starts two days after the wall clock, so directories written now (dated by the store)
// are already past the 24 hours grace of incomplete uploads.
type retWorld struct {
	t        *testing.T
	ctx      context.Context
	env      *kubetest.Env
	ns       string
	s3       *s3test.Server
	proxy    *s3proxy.Proxy
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
	// rec is the reconciler under test; its failure count lives as long as the world.
	rec *controller.RetentionReconciler
}

func newRetWorld(t *testing.T) *retWorld {
	t.Helper()
	e := controlPlane(t)
	s3 := s3test.Start(t)
	w := &retWorld{t: t, ctx: context.Background(), env: e, ns: e.NewNamespace(t), s3: s3,
		proxy: s3proxy.Start(t, s3.Endpoint), recorder: record.NewFakeRecorder(1000),
		clock: clocktesting.NewFakeClock(time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second))}
	w.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3", Namespace: w.ns},
		Data: map[string][]byte{"id": []byte(s3.AccessKey), "secret": []byte(s3.SecretKey)}})
	w.rec = &controller.RetentionReconciler{Client: e.Client, APIReader: e.Client, Recorder: w.recorder, Clock: w.clock,
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
	w.t.Helper()
	o := *w
	o.ns = w.env.NewNamespace(w.t)
	o.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3", Namespace: o.ns},
		Data: map[string][]byte{"id": []byte(w.s3.AccessKey), "secret": []byte(w.s3.SecretKey)}})
	return &o
}

func (w *retWorld) create(obj client.Object) {
	w.t.Helper()
	if err := w.env.Client.Create(w.ctx, obj); err != nil {
		w.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// createCluster creates a Cluster with the window policy (none when ""), an object store through
// the proxy, and currentPrimary <name>-1 unless primary is false.
func (w *retWorld) createCluster(name, policy string, primary bool) {
	w.t.Helper()
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Backup: &v1.BackupConfiguration{RetentionPolicy: policy, ObjectStore: &v1.ObjectStoreConfiguration{
				Bucket: w.s3.Bucket, Path: "ctl", Endpoint: w.proxy.URL, Region: w.s3.Region, ForcePathStyle: true,
				Credentials: v1.S3Credentials{AccessKeyID: v1.SecretKeySelector{Name: "s3", Key: "id"},
					SecretAccessKey: v1.SecretKeySelector{Name: "s3", Key: "secret"}}}}}}
	w.create(c)
	if primary {
		c.Status.CurrentPrimary = name + "-1"
		if err := w.env.Client.Status().Update(w.ctx, c); err != nil {
			w.t.Fatalf("setting the Cluster status: %v", err)
		}
	}
}

// createRecoveryCluster creates a Cluster bootstrapped from backup, without a policy.
func (w *retWorld) createRecoveryCluster(name, backup string) {
	w.t.Helper()
	w.create(&v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
			Storage:   v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Bootstrap: &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{Backup: v1.LocalObjectReference{Name: backup}}}}})
}

// store is a client of the versitygw bucket itself, not through the proxy.
func (w *retWorld) store() *objectstore.Client {
	w.t.Helper()
	s, err := objectstore.New(objectstore.Config{Endpoint: strings.TrimPrefix(w.s3.Endpoint, "http://"),
		Region: w.s3.Region, Bucket: w.s3.Bucket, Path: "ctl", ForcePathStyle: true,
		Credentials: objectstore.Credentials{AccessKeyID: w.s3.AccessKey, SecretAccessKey: w.s3.SecretKey}})
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// backupID is the id the Backup controller gives a backup started at t.
func backupID(t time.Time) string { return t.UTC().Format("20060102T150405Z") }

// uploadBackup uploads a complete backup of cluster that ran for a minute and completed age before
// the fake now, its metadata.json naming the world's namespace as a backup Job writes it, and
// creates its completed Backup object, as the Backup controller leaves it.
func (w *retWorld) uploadBackup(cluster, name string, age time.Duration) objectstore.BackupRef {
	w.t.Helper()
	done := w.clock.Now().Add(-age)
	ref := objectstore.BackupRef{Cluster: cluster, Name: name, ID: backupID(done.Add(-time.Minute))}
	data := bytes.Repeat([]byte(name), 500)
	sum := sha256.Sum256(data)
	md, err := w.store().UploadBackup(w.ctx, objectstore.UploadRequest{Backup: ref, Namespace: w.ns, Method: "clone",
		Format: objectstore.FormatTar, Compression: objectstore.CompressionZstd, Archive: bytes.NewReader(data),
		Finish: func() (objectstore.ProducerResult, error) {
			return objectstore.ProducerResult{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]),
				GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", ServerVersion: "9.7.4",
				StartedAt: done.Add(-time.Minute), StoppedAt: done}, nil
		}})
	if err != nil {
		w.t.Fatalf("uploading %s: %v", name, err)
	}
	w.createBackupObject(name, cluster, ref, v1.BackupPhaseCompleted)
	b := w.backup(name)
	b.Status.Checksum, b.Status.Size = md.Checksum(), md.Size
	b.Status.CompletedAt = &metav1.Time{Time: done}
	if err := w.env.Client.Status().Update(w.ctx, b); err != nil {
		w.t.Fatal(err)
	}
	return ref
}

// createBackupObject creates a Backup of cluster in phase whose status names ref's directory.
func (w *retWorld) createBackupObject(name, cluster string, ref objectstore.BackupRef, phase v1.BackupPhase) {
	w.t.Helper()
	b := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: cluster}}}
	w.create(b)
	b.Status = v1.BackupStatus{Phase: phase, InstanceName: cluster + "-1", JobName: name, BackupID: ref.ID,
		Endpoint: w.proxy.URL, Bucket: w.s3.Bucket, DestinationPath: objectstore.BackupDir("ctl", ref)}
	if err := w.env.Client.Status().Update(w.ctx, b); err != nil {
		w.t.Fatalf("setting the status of Backup %s: %v", name, err)
	}
}

// putIncomplete writes an archive without metadata.json, as an interrupted upload leaves it.
func (w *retWorld) putIncomplete(ref objectstore.BackupRef) {
	w.t.Helper()
	key := objectstore.ArchiveKey("ctl", ref, "tar.zst")
	if _, err := w.s3.Client().PutObject(w.ctx, w.s3.Bucket, key, bytes.NewReader([]byte("partial")), 7,
		minio.PutObjectOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// dirs lists cluster's backup directories as "name" (complete) or "name (incomplete)", sorted.
func (w *retWorld) dirs(cluster string) []string {
	w.t.Helper()
	entries, err := w.store().ListBackups(w.ctx, cluster)
	if err != nil {
		w.t.Fatal(err)
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
	w.t.Helper()
	slices.Sort(want)
	if got := w.dirs(cluster); !slices.Equal(got, want) {
		w.t.Fatalf("directories of %s: %q, want %q", cluster, got, want)
	}
}

func (w *retWorld) reconcile(cluster string) (ctrl.Result, error) {
	return w.rec.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: w.ns, Name: cluster}})
}

// reconcileOK reconciles and fails the test on an error.
func (w *retWorld) reconcileOK(cluster string) ctrl.Result {
	w.t.Helper()
	res, err := w.reconcile(cluster)
	if err != nil {
		w.t.Fatalf("reconcile %s: %v", cluster, err)
	}
	return res
}

func (w *retWorld) cluster(name string) *v1.Cluster {
	w.t.Helper()
	var c v1.Cluster
	if err := w.env.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, &c); err != nil {
		w.t.Fatal(err)
	}
	return &c
}

func (w *retWorld) backup(name string) *v1.Backup {
	w.t.Helper()
	var b v1.Backup
	if err := w.env.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, &b); err != nil {
		w.t.Fatal(err)
	}
	return &b
}

// wantStamp checks status.lastRetentionRunTime: at want, or absent when want is zero.
func (w *retWorld) wantStamp(cluster string, want time.Time) {
	w.t.Helper()
	got := w.cluster(cluster).Status.LastRetentionRunTime
	switch {
	case want.IsZero() && got != nil:
		w.t.Fatalf("lastRetentionRunTime %v, want none", got)
	case !want.IsZero() && (got == nil || !got.Time.Equal(want)):
		w.t.Fatalf("lastRetentionRunTime %v, want %v", got, want)
	}
}

// artifacts is the reason of the Backup's ArtifactsAvailable condition ("" when absent), the
// column `kubectl get backups` shows.
func (w *retWorld) artifacts(name string) string {
	w.t.Helper()
	c := meta.FindStatusCondition(w.backup(name).Status.Conditions, v1.BackupArtifactsAvailable)
	if c == nil {
		return ""
	}
	if c.Status != metav1.ConditionFalse {
		w.t.Fatalf("Backup %s: ArtifactsAvailable is %s", name, c.Status)
	}
	return c.Reason
}

// events drains the recorded Events.
func (w *retWorld) events() string {
	var out []string
	for {
		select {
		case e := <-w.recorder.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}
