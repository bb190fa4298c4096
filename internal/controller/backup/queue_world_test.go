package backup_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestOneBackupPerClusterAtATime: on the real API server, Backups of one Cluster run one at a
// time. Reconciled all at once by the controller's workers, exactly one of five starts a Job; the
// others wait (Queued=True, naming it), in creation order; when it ends, the next starts; the
// older waiting Backup of a ScheduledBackup ends superseded by its newer one.
func TestOneBackupPerClusterAtATime(t *testing.T) {
	w := newBkWorld(t)
	names := []string{"q1", "q2", "q3", "q4", "q5"}
	for _, n := range names {
		w.createBackup(n, "db", time.Hour)
	}
	r := w.reconciler() // one controller: its workers share the per-Cluster lock
	var wg sync.WaitGroup
	// Rounds of concurrent reconciles, as the controller's workers run them: one that finds the
	// Cluster's lock taken is requeued (a second later in the controller), so several rounds.
	for range 10 {
		for _, n := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key(n)}); err != nil {
					t.Logf("reconcile %s: %v", n, err)
				}
			}()
		}
		wg.Wait()
	}
	// A reconcile that never won the lock in those rounds is requeued by the controller: one more
	// pass, one at a time, as the requeues would run.
	for _, n := range names {
		w.reconcile(n)
	}
	startedBackups := func() []string {
		var out []string
		for _, n := range names {
			if b := w.backup(n); b.Status.JobName != "" && !b.IsDone() {
				out = append(out, n)
			}
		}
		return out
	}
	if got := startedBackups(); len(got) != 1 || got[0] != "q1" {
		t.Fatalf("started %v, want only q1 (the oldest)", got)
	}
	for _, n := range names[1:] {
		b := w.backup(n)
		c := meta.FindStatusCondition(b.Status.Conditions, v1.BackupQueued)
		if b.Status.Phase != v1.BackupPhasePending || c == nil || c.Status != metav1.ConditionTrue || w.job(n) != nil {
			t.Errorf("%s: phase %q, Queued %+v, Job %v; want pending and queued, no Job", n, b.Status.Phase, c, w.job(n) != nil)
		}
	}
	if ev := w.events(); !strings.Contains(ev, "Normal Queued Waiting: Backup q1 of Cluster db runs") {
		t.Errorf("events %q", ev)
	}

	w.runUntil("q1", v1.BackupPhaseRunning)
	w.finishPod("q1", corev1.PodFailed, `{"error":"clone: donor refused the connection"}`)
	w.runUntil("q1", v1.BackupPhaseFailed)
	for _, n := range names[1:] {
		w.reconcile(n)
	}
	if got := startedBackups(); len(got) != 1 || got[0] != "q2" {
		t.Fatalf("after q1 ended, started %v, want q2 next", got)
	}
	if c := meta.FindStatusCondition(w.backup("q2").Status.Conditions, v1.BackupQueued); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("q2 started with Queued %+v, want False", c)
	}

	// Two Backups of one schedule wait behind q2: the older is superseded, the newer stays queued.
	for _, n := range []string{"nightly-1", "nightly-2"} {
		w.Create(&v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: w.NS, Labels: map[string]string{v1.ScheduledBackupLabel: "nightly"}},
			Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "db"}, Timeout: &metav1.Duration{Duration: time.Hour}}})
		time.Sleep(1100 * time.Millisecond) // creation timestamps are whole seconds
	}
	w.Clock.Step(3 * time.Second) // past the scheduled Backups' first-look wait
	w.reconcile("nightly-1")
	w.reconcile("nightly-2")
	if b := w.backup("nightly-1"); b.Status.Phase != v1.BackupPhaseSuperseded || !strings.Contains(b.Status.Error, "nightly-2") || w.job("nightly-1") != nil {
		t.Errorf("nightly-1: %+v, want superseded by nightly-2 without a Job", b.Status)
	}
	if b := w.backup("nightly-2"); b.Status.Phase != v1.BackupPhasePending || b.Status.JobName != "" {
		t.Errorf("nightly-2: %+v, want queued", b.Status)
	}
}
