package backup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestBackupController drives Backups on the real API server with kube-controller-manager; the
// subtests share one namespace and object store.
func TestBackupController(t *testing.T) {
	w := newBkWorld(t)
	t.Run("completed only once the Job succeeded and metadata.json exists, then never run again", w.testCompleted)
	t.Run("a Pod that fails fails the Backup with the backup's own error", w.testPodFailed)
	t.Run("a Job that disappears fails the Backup and is never recreated", w.testJobGone)
	t.Run("a Backup past its timeout fails and its Job is deleted", w.testTimeout)
	t.Run("a Job that succeeded without metadata.json fails the Backup", w.testNoMetadata)
	t.Run("a missing Cluster or object store fails fast", w.testFailFast)
	t.Run("a scheduled Backup is first acted on ScheduledFirstLook after its creation, nothing written before", w.testScheduledFirstLook)
}

func (w *bkWorld) testCompleted(t *testing.T) {
	w.T = t
	w.createBackup("good", "db", time.Hour)
	b := w.runUntil("good", v1.BackupPhaseRunning)
	if b.Status.InstanceName != "db-3" {
		t.Errorf("target %s, want db-3 (the replica with the least lag)", b.Status.InstanceName)
	}
	job := w.job("good")
	if job == nil || len(job.OwnerReferences) != 1 || job.OwnerReferences[0].UID != b.UID {
		t.Fatalf("Job %+v is not owned by the Backup", job)
	}
	if !strings.Contains(strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "), "--target-host=db-3."+w.NS+".svc") {
		t.Errorf("Job args %q", job.Spec.Template.Spec.Containers[0].Args)
	}
	md := w.uploadFor(b)
	w.finishPod("good", corev1.PodSucceeded, fmt.Sprintf(`{"checksum":%q}`, md.Checksum()))
	b = w.runUntil("good", v1.BackupPhaseCompleted)
	if b.Status.Checksum != md.Checksum() || b.Status.Size != md.Size || b.Status.GTIDExecuted != md.GTIDExecuted ||
		b.Status.BinlogFile != md.BinlogFile || b.Status.CompletedAt == nil || b.Status.StartedAt == nil {
		t.Errorf("status %+v, metadata %+v", b.Status, md)
	}
	if ev := w.events(); !strings.Contains(ev, "BackupCompleted") {
		t.Errorf("events %s", ev)
	}
	// The Job's TTL (or anyone) deletes it; a restarted operator does nothing.
	w.deleteJob("good")
	for range 3 {
		if res := w.reconcile("good"); res.RequeueAfter != 0 {
			t.Errorf("a completed Backup is requeued: %v", res)
		}
	}
	if w.job("good") != nil {
		t.Error("the Job of a completed Backup was recreated")
	}
}

// uploadFor writes a small archive and its metadata.json (naming the Backup's namespace) where
// the Backup says it goes, as the Job's data path would.
func (w *bkWorld) uploadFor(b *v1.Backup) *objectstore.Metadata {
	w.T.Helper()
	prefix, ref, err := objectstore.ParseBackupDir(b.Status.DestinationPath)
	check.Must(w.T, err)
	store, err := w.store.Direct(prefix)
	check.Must(w.T, err)
	data := bytes.Repeat([]byte("archive"), 1000)
	sum := sha256.Sum256(data)
	md, err := store.UploadBackup(w.Ctx, objectstore.UploadRequest{Backup: ref, Namespace: b.Namespace, Method: "clone",
		Format: objectstore.FormatTar, Compression: objectstore.CompressionZstd, Archive: bytes.NewReader(data),
		Finish: func() (objectstore.ProducerResult, error) {
			return objectstore.ProducerResult{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]),
				GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", BinlogFile: "binlog.000002", BinlogPosition: 157,
				ServerVersion: "9.7.4", StartedAt: time.Now(), StoppedAt: time.Now()}, nil
		}})
	check.Must(w.T, err)
	return md
}

func (w *bkWorld) deleteJob(name string) {
	w.T.Helper()
	job := w.job(name)
	if job == nil {
		return
	}
	check.Must(w.T, w.Client.Delete(w.Ctx, job, client.PropagationPolicy("Background")))
	w.Eventually("Job "+name+" is gone", func(ctx context.Context) (bool, error) { return w.job(name) == nil, nil })
}

func (w *bkWorld) testPodFailed(t *testing.T) {
	w.T = t
	w.createBackup("broken", "db", time.Hour)
	w.runUntil("broken", v1.BackupPhaseRunning)
	w.finishPod("broken", corev1.PodFailed, `{"error":"clone: donor refused the connection"}`)
	b := w.runUntil("broken", v1.BackupPhaseFailed)
	if !strings.Contains(b.Status.Error, "donor refused the connection") {
		t.Errorf("error %q", b.Status.Error)
	}
	if ev := w.events(); !strings.Contains(ev, "Warning JobFailed") {
		t.Errorf("events %s", ev)
	}
}

func (w *bkWorld) testJobGone(t *testing.T) {
	w.T = t
	w.createBackup("vanished", "db", time.Hour)
	w.runUntil("vanished", v1.BackupPhaseRunning)
	w.deleteJob("vanished")
	b := w.runUntil("vanished", v1.BackupPhaseFailed)
	if !strings.Contains(b.Status.Error, "disappeared") {
		t.Errorf("error %q", b.Status.Error)
	}
	w.reconcile("vanished")
	if w.job("vanished") != nil {
		t.Error("the Job of a failed Backup was recreated")
	}
}

func (w *bkWorld) testTimeout(t *testing.T) {
	w.T = t
	w.createBackup("slow", "db", time.Minute)
	w.runUntil("slow", v1.BackupPhaseRunning)
	w.Clock.Step(2 * time.Minute)
	b := w.runUntil("slow", v1.BackupPhaseFailed)
	if !strings.Contains(b.Status.Error, "timeout") {
		t.Errorf("error %q", b.Status.Error)
	}
	w.Eventually("the timed-out Job is deleted", func(ctx context.Context) (bool, error) {
		j := w.job("slow")
		return j == nil || j.DeletionTimestamp != nil, nil
	})
}

func (w *bkWorld) testNoMetadata(t *testing.T) {
	w.T = t
	w.createBackup("hollow", "db", time.Hour)
	w.runUntil("hollow", v1.BackupPhaseRunning)
	w.finishPod("hollow", corev1.PodSucceeded, `{"checksum":"sha256:00"}`)
	b := w.runUntil("hollow", v1.BackupPhaseFailed)
	if !strings.Contains(b.Status.Error, "metadata.json does not exist") {
		t.Errorf("error %q", b.Status.Error)
	}
}

func (w *bkWorld) testFailFast(t *testing.T) {
	w.T = t
	w.createBackup("orphan", "nope", time.Hour)
	w.reconcile("orphan")
	if b := w.backup("orphan"); b.Status.Phase != v1.BackupPhaseFailed || !strings.Contains(b.Status.Error, "Cluster nope not found") {
		t.Errorf("status %+v", b.Status)
	}
	w.createCluster("bare", false)
	w.createBackup("nowhere", "bare", time.Hour)
	w.reconcile("nowhere")
	if b := w.backup("nowhere"); b.Status.Phase != v1.BackupPhaseFailed || !strings.Contains(b.Status.Error, "objectStore") {
		t.Errorf("status %+v", b.Status)
	}
	if ev := w.events(); !strings.Contains(ev, "Warning ClusterNotFound") || !strings.Contains(ev, "Warning NoObjectStore") {
		t.Errorf("events %s", ev)
	}
}

func (w *bkWorld) testScheduledFirstLook(t *testing.T) {
	w.T = t
	w.Create(&v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "nightly-1", Namespace: w.NS,
		Labels: map[string]string{v1.ScheduledBackupLabel: "nightly"}},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "nope"}}})
	created := w.backup("nightly-1")
	w.Clock.SetTime(created.CreationTimestamp.Add(500 * time.Millisecond))
	r := w.reconciler()
	r.FirstLook = backup.ScheduledFirstLook
	res, err := r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("nightly-1")})
	check.Must(t, err)
	if b := w.backup("nightly-1"); res.RequeueAfter != 1500*time.Millisecond || b.Status.Phase != "" || b.ResourceVersion != created.ResourceVersion {
		t.Fatalf("requeue after %s, status %+v (resourceVersion %s, was %s), want 1.5s and nothing written",
			res.RequeueAfter, b.Status, b.ResourceVersion, created.ResourceVersion)
	}
	w.Clock.Step(1500 * time.Millisecond)
	_, err = r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("nightly-1")})
	check.Must(t, err)
	if b := w.backup("nightly-1"); b.Status.Phase != v1.BackupPhaseFailed || !strings.Contains(b.Status.Error, "Cluster nope not found") {
		t.Errorf("status %+v after the first look, want failed", b.Status)
	}
}
