package backup_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/metricstest"
)

// metric is the value of the Cluster db's series name with the extra labels; -1 when none.
func (w *bkWorld) metric(name string, extra ...string) float64 {
	w.T.Helper()
	return metricstest.ClusterValue(w.T, w.NS, "db", name, extra...)
}

// TestBackupsCountedOnce: a completed and a failed Backup are each counted once, when the
// operator records their end, however many reconcilers (each one new, as after a restart) look
// at them afterwards; the gauges show the last finished one's duration and the last completed
// one's size.
func TestBackupsCountedOnce(t *testing.T) {
	w := newBkWorld(t)
	w.createBackup("good", "db", time.Hour)
	b := w.runUntil("good", v1.BackupPhaseRunning)
	md := w.uploadFor(b)
	w.Clock.Step(42 * time.Second)
	w.finishPod("good", corev1.PodSucceeded, fmt.Sprintf(`{"checksum":%q}`, md.Checksum()))
	b = w.runUntil("good", v1.BackupPhaseCompleted)
	took := b.Status.CompletedAt.Sub(b.Status.StartedAt.Time).Seconds()
	for range 3 {
		w.reconcile("good")
	}
	if got := w.metric("cnm_backups_total", "result", "completed"); got != 1 {
		t.Errorf("completed: %v, want 1", got)
	}
	if got := w.metric("cnm_backups_total", "result", "failed"); got != 0 {
		t.Errorf("failed before any failure: %v, want 0", got)
	}
	if got := w.metric("cnm_backup_bytes"); got != float64(md.Size) || md.Size == 0 {
		t.Errorf("bytes %v, want %d", got, md.Size)
	}
	if got := w.metric("cnm_backup_duration_seconds"); got != took || took < 42 {
		t.Errorf("duration %v, want %v", got, took)
	}

	w.createBackup("broken", "db", time.Hour)
	w.runUntil("broken", v1.BackupPhaseRunning)
	w.Clock.Step(7 * time.Second)
	w.finishPod("broken", corev1.PodFailed, `{"error":"clone: donor refused the connection"}`)
	failed := w.runUntil("broken", v1.BackupPhaseFailed)
	for range 3 {
		w.reconcile("broken")
		w.reconcile("good")
	}
	if got := w.metric("cnm_backups_total", "result", "failed"); got != 1 {
		t.Errorf("failed: %v, want 1", got)
	}
	if got := w.metric("cnm_backups_total", "result", "completed"); got != 1 {
		t.Errorf("completed after the failure: %v, want 1", got)
	}
	if got, want := w.metric("cnm_backup_duration_seconds"), failed.Status.CompletedAt.Sub(failed.Status.StartedAt.Time).Seconds(); got != want {
		t.Errorf("duration %v, want the failed Backup's %v", got, want)
	}
	if got := w.metric("cnm_backup_bytes"); got != float64(md.Size) {
		t.Errorf("bytes %v, want the last completed Backup's %d", got, md.Size)
	}
}

// TestFinishedBackupsAtStartup: Backups that finished before the operator started are shown in
// the gauges when it starts, and not counted; the Cluster's series vanish when it is deleted.
func TestFinishedBackupsAtStartup(t *testing.T) {
	w := newBkWorld(t)
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	finish := func(name string, phase v1.BackupPhase, took time.Duration, size int64) {
		w.createBackup(name, "db", time.Hour)
		b := w.backup(name)
		b.Status = v1.BackupStatus{Phase: phase, Size: size, StartedAt: &metav1.Time{Time: start},
			CompletedAt: &metav1.Time{Time: start.Add(took)}}
		w.UpdateStatus(b)
	}
	finish("older", v1.BackupPhaseCompleted, 30*time.Second, 1000)
	finish("newer", v1.BackupPhaseCompleted, 50*time.Second, 2000)
	finish("failed", v1.BackupPhaseFailed, 40*time.Second, 0)
	w.StartManager(func(mgr ctrl.Manager) error {
		r := w.reconciler()
		r.Client, r.APIReader = mgr.GetClient(), mgr.GetAPIReader()
		return r.SetupWithManager(mgr)
	})
	w.Eventually("the last finished Backups shown", func(context.Context) (bool, error) {
		return w.metric("cnm_backup_duration_seconds") == 50 && w.metric("cnm_backup_bytes") == 2000, nil
	})
	for _, result := range []string{"completed", "failed"} {
		if got := w.metric("cnm_backups_total", "result", result); got != 0 {
			t.Errorf("%s Backups found finished at startup counted %v times, want 0", result, got)
		}
	}

	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.NS, Name: "db"}}
	if err := w.Client.Delete(w.Ctx, c); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the Cluster's series gone", func(context.Context) (bool, error) {
		n, err := testutil.GatherAndCount(metricstest.Of(ctrlmetrics.Registry, map[string]string{"namespace": w.NS, "cluster": "db"}),
			"cnm_backups_total", "cnm_backup_duration_seconds", "cnm_backup_bytes")
		return n == 0, err
	})
}
