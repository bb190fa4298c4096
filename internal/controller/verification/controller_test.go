package verification_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/verification"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/ctrlworld"
)

// vWorld is a namespace on the real API server (kube-controller-manager runs the Job controller
// and the garbage collector) with a Cluster "db" that verifies every backup and holds its
// location in a real versitygw. The test plays the backup controller (Backups are set completed)
// and the kubelet (the verification Pod ends with a result).
type vWorld struct {
	*ctrlworld.World
}

func newVWorld(t *testing.T) *vWorld {
	t.Helper()
	w := &vWorld{ctrlworld.New(t, shared)}
	store := w.StartStore("s3", "\n")
	one := int32(1)
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: w.NS},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600, Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Backup: &v1.BackupConfiguration{ObjectStore: store.Config("s3", "ctl", false),
				Verification: &v1.BackupVerification{EveryBackups: &one}}}}
	w.Create(c)
	c.Status.CurrentPrimary, c.Status.LatestGeneratedNode = "db-1", 1
	w.UpdateStatus(c)
	w.ClaimLocation("db", nil)
	return w
}

// complete creates Backup name of db, completed now as the backup controller leaves it.
func (w *vWorld) complete(name string) {
	w.T.Helper()
	b := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "db"}}}
	w.Create(b)
	now := metav1.NewTime(w.Clock.Now())
	id := w.Clock.Now().UTC().Format("20060102T150405Z")
	b.Status = v1.BackupStatus{Phase: v1.BackupPhaseCompleted, BackupID: id, StartedAt: &now, CompletedAt: &now,
		DestinationPath: "ctl/db/" + name + "/" + id + "/", Checksum: "sha256:aa", Size: 10}
	w.UpdateStatus(b)
	w.Clock.Step(time.Minute)
}

func (w *vWorld) reconcile() {
	w.T.Helper()
	r := &verification.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock,
		OperatorImage: "operator:test"}
	if _, err := r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("db")}); err != nil {
		w.T.Fatalf("reconcile: %v", err)
	}
}

// jobs lists the Cluster's verification Jobs, uncached.
func (w *vWorld) jobs() []batchv1.Job {
	w.T.Helper()
	var l batchv1.JobList
	check.Must(w.T, w.Client.List(w.Ctx, &l, client.InNamespace(w.NS), client.HasLabels{v1.VerificationLabel}))
	return l.Items
}

// oneJob reconciles until exactly one verification Job exists, of backup, and returns it.
func (w *vWorld) oneJob(backup string) batchv1.Job {
	w.T.Helper()
	w.reconcile()
	jobs := w.jobs()
	if len(jobs) != 1 || jobs[0].Labels[v1.VerificationLabel] != backup {
		w.T.Fatalf("%d verification Jobs, want one of %s", len(jobs), backup)
	}
	return jobs[0]
}

func msg(r backupjob.VerifyResult) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// TestVerificationsOnTheAPIServer: every backup is verified once, one Job at a time; a pass and a
// failure are recorded on the Backup and the Cluster with Events; the Job goes once recorded; a
// failure changes nothing else on the Backup.
func TestVerificationsOnTheAPIServer(t *testing.T) {
	w := newVWorld(t)
	w.reconcile()
	c := ctrlworld.Get[v1.Cluster](w.World, "db")
	if cond := meta.FindStatusCondition(c.Status.Conditions, v1.ClusterBackupsVerified); cond == nil || cond.Reason != v1.ReasonVerificationPending {
		t.Fatalf("BackupsVerified before any backup: %+v", cond)
	}
	if len(w.jobs()) != 0 {
		t.Fatal("a verification started without a completed backup")
	}

	w.complete("b1")
	j := w.oneJob("b1")
	if j.OwnerReferences[0].Name != "b1" || *j.Spec.ActiveDeadlineSeconds != 7200 {
		t.Errorf("Job %s: owners %+v, deadline %d", j.Name, j.OwnerReferences, *j.Spec.ActiveDeadlineSeconds)
	}
	t.Run("one verification at a time: a second completed backup waits", func(t *testing.T) {
		w.complete("b2")
		if again := w.oneJob("b1"); again.Name != j.Name {
			t.Errorf("the Job changed: %s", again.Name)
		}
	})
	t.Run("a pass is recorded on the Backup and the Cluster, then the Job goes", func(t *testing.T) {
		w.FinishJobPod(j.Name, "verify", corev1.PodSucceeded, msg(backupjob.VerifyResult{Passed: true, GTIDExecuted: "u:1-9",
			Tables: 41, TablesChecked: 41, Rows: 5062, RestoreMillis: 2000, CheckMillis: 100}))
		w.reconcile()
		b := ctrlworld.Get[v1.Backup](w.World, "b1")
		cond := meta.FindStatusCondition(b.Status.Conditions, v1.BackupVerified)
		if cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "41 of 41 tables") ||
			b.Status.Verification == nil || b.Status.Verification.Rows != 5062 {
			t.Errorf("Backup b1: condition %+v, verification %+v", cond, b.Status.Verification)
		}
		c := ctrlworld.Get[v1.Cluster](w.World, "db")
		if l := c.Status.LastVerifiedBackup; l == nil || l.Name != "b1" || !l.Passed || l.LastPassedAt == nil {
			t.Errorf("lastVerifiedBackup %+v", l)
		}
		if cond := meta.FindStatusCondition(c.Status.Conditions, v1.ClusterBackupsVerified); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Errorf("BackupsVerified %+v", cond)
		}
		w.Eventually("the verification Job is deleted", w.Gone(&j))
		if ev := strings.Join(w.Events(), "\n"); !strings.Contains(ev, "BackupVerified") || !strings.Contains(ev, "VerificationStarted") {
			t.Errorf("events:\n%s", ev)
		}
	})
	t.Run("the next backup is verified; a failure keeps the backup completed and says why", func(t *testing.T) {
		j2 := w.oneJob("b2")
		w.FinishJobPod(j2.Name, "verify", corev1.PodFailed, msg(backupjob.VerifyResult{Reason: v1.ReasonVerificationTable,
			Message: "a table of the restored data failed CHECK TABLE: mysqld stopped while checking `shop`.`orders`"}))
		before := ctrlworld.Get[v1.Backup](w.World, "b2")
		w.reconcile()
		b := ctrlworld.Get[v1.Backup](w.World, "b2")
		cond := meta.FindStatusCondition(b.Status.Conditions, v1.BackupVerified)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != v1.ReasonVerificationTable || !strings.Contains(cond.Message, "orders") {
			t.Errorf("Backup b2 condition %+v", cond)
		}
		if b.Status.Phase != v1.BackupPhaseCompleted || b.Status.Checksum != before.Status.Checksum || b.Status.DestinationPath != before.Status.DestinationPath {
			t.Errorf("the failed verification changed the Backup: %+v", b.Status)
		}
		c := ctrlworld.Get[v1.Cluster](w.World, "db")
		if cond := meta.FindStatusCondition(c.Status.Conditions, v1.ClusterBackupsVerified); cond == nil ||
			cond.Status != metav1.ConditionFalse || cond.Reason != v1.ReasonVerificationTable {
			t.Errorf("BackupsVerified %+v", cond)
		}
		if l := c.Status.LastVerifiedBackup; l == nil || l.Passed || l.LastPassedAt == nil {
			t.Errorf("lastVerifiedBackup %+v: want failed, still saying when one last passed", l)
		}
		if ev := strings.Join(w.Events(), "\n"); !strings.Contains(ev, "Warning BackupVerificationFailed TableCheckFailed") {
			t.Errorf("events:\n%s", ev)
		}
		w.Eventually("the verification Job is deleted", w.Gone(&j2))
		w.reconcile()
		if n := len(w.jobs()); n != 0 {
			t.Errorf("%d verification Jobs after every backup was verified", n)
		}
	})
}

// TestEachBackupVerifiedOnceThroughTheCache: with the operator's manager (a cache that lags the
// writes, watches of Jobs, Backups and the Cluster), three backups completed one after the other
// are each verified by exactly one Job, even though each recorded Job is deleted in the same pass
// that records it.
func TestEachBackupVerifiedOnceThroughTheCache(t *testing.T) {
	w := newVWorld(t)
	w.StartManager(func(mgr ctrl.Manager) error {
		r := verification.NewReconciler(mgr, w.Clock)
		r.Recorder, r.OperatorImage = w.Recorder, "operator:test"
		return r.SetupWithManager(mgr)
	})
	var started []string
	for _, name := range []string{"b1", "b2", "b3"} {
		w.complete(name)
		var job batchv1.Job
		w.Eventually("a verification Job of "+name, func(context.Context) (bool, error) {
			for _, j := range w.jobs() {
				if j.Labels[v1.VerificationLabel] == name {
					job = j
					return true, nil
				}
			}
			return false, nil
		})
		w.FinishJobPod(job.Name, "verify", corev1.PodSucceeded, msg(backupjob.VerifyResult{Passed: true, Tables: 1, TablesChecked: 1}))
		w.Eventually(name+" verified and its Job gone", func(ctx context.Context) (bool, error) {
			b := ctrlworld.Get[v1.Backup](w.World, name)
			return meta.IsStatusConditionTrue(b.Status.Conditions, v1.BackupVerified) && len(w.jobs()) == 0, nil
		})
	}
	time.Sleep(2 * time.Second) // room for a stale decision to start a second Job
	// Each start is one Event on the Cluster and one on the Backup.
	for _, e := range w.Events() {
		if strings.Contains(e, "VerificationStarted") {
			started = append(started, e)
		}
	}
	if n := len(w.jobs()); n != 0 || len(started) != 2*3 {
		t.Errorf("%d Jobs left, %d start Events (want 6: 3 verifications, one per backup):\n%s", n, len(started), strings.Join(started, "\n"))
	}
}
