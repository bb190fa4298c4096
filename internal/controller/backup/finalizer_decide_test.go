package backup

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// finBackupOpt changes the Backup of a decision test.
type finBackupOpt func(*v1.Backup)

// finBackup is a completed Backup b1 of Cluster db with the given policy, its directory recorded.
func finBackup(policy v1.DeletionPolicy, opts ...finBackupOpt) *v1.Backup {
	b := bkBackup(v1.BackupPhaseCompleted, "b1")
	b.Spec.DeletionPolicy = policy
	b.Status.BackupID, b.Status.DestinationPath = "X", "p/db/b1/X/"
	b.Status.Endpoint, b.Status.Bucket = "http://s3:9000", "bk"
	for _, o := range opts {
		o(b)
	}
	return b
}

func withFinalizer(b *v1.Backup) { b.Finalizers = append(b.Finalizers, v1.RemoteCleanupFinalizer) }

func deleting(b *v1.Backup) {
	t := metav1.NewTime(bkT0.Add(time.Hour))
	b.DeletionTimestamp = &t
	withFinalizer(b)
}

func bypassed(b *v1.Backup) {
	b.Annotations = map[string]string{v1.RemoteCleanupBypassAnnotation: "true"}
}

func runningAt(phase v1.BackupPhase) finBackupOpt {
	return func(b *v1.Backup) { b.Status.Phase = phase }
}

func noDestination(b *v1.Backup) {
	b.Status.Phase, b.Status.BackupID, b.Status.DestinationPath = v1.BackupPhaseFailed, "", ""
}

// failingSince marks the RemoteCleanup condition False since d before the decision's now.
func failingSince(d time.Duration) finBackupOpt {
	return func(b *v1.Backup) {
		b.Status.Conditions = []metav1.Condition{{Type: v1.BackupRemoteCleanup, Status: metav1.ConditionFalse,
			Reason: v1.ReasonCleanupFailed, LastTransitionTime: metav1.NewTime(finNow.Add(-d))}}
	}
}

var finNow = bkT0.Add(2 * time.Hour)

func finCluster(policy v1.DeletionPolicy) *v1.Cluster {
	return &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
		Spec: v1.ClusterSpec{Backup: &v1.BackupConfiguration{DeletionPolicy: policy}}}
}

func goingCluster(policy v1.DeletionPolicy) *v1.Cluster {
	c := finCluster(policy)
	t := metav1.NewTime(bkT0)
	c.DeletionTimestamp = &t
	return c
}

func TestDecideFinalizer(t *testing.T) {
	activeJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "b1"}}
	for _, tc := range []struct {
		rule    string
		o       finalizerObservation
		action  finalizerAction
		reason  string // of the RemoteCleanup condition written, "" for none
		status  metav1.ConditionStatus
		event   string // "<type> <reason>" of the single Event, "" for none
		requeue time.Duration
	}{
		{rule: "spec delete: the finalizer is added",
			o:      finalizerObservation{Backup: finBackup(v1.DeletionPolicyDelete)},
			action: finAdd, event: "Normal RemoteCleanupEnabled"},
		{rule: "spec empty and the Cluster's default delete: the finalizer is added",
			o:      finalizerObservation{Backup: finBackup(""), Cluster: finCluster(v1.DeletionPolicyDelete)},
			action: finAdd, event: "Normal RemoteCleanupEnabled"},
		{rule: "spec empty and no Cluster default: keep, no finalizer",
			o:      finalizerObservation{Backup: finBackup(""), Cluster: finCluster("")},
			action: finNothing},
		{rule: "spec delete with the finalizer: nothing to change",
			o:      finalizerObservation{Backup: finBackup(v1.DeletionPolicyDelete, withFinalizer)},
			action: finNothing},
		{rule: "patched to keep (as the schedule's pruning does): the finalizer is removed",
			o:      finalizerObservation{Backup: finBackup(v1.DeletionPolicyKeep, withFinalizer), Cluster: finCluster(v1.DeletionPolicyDelete)},
			action: finRemove, event: "Normal RemoteCleanupDisabled"},
		{rule: "the Cluster's default turned to keep: the finalizer is removed",
			o:      finalizerObservation{Backup: finBackup("", withFinalizer), Cluster: finCluster(v1.DeletionPolicyKeep)},
			action: finRemove, event: "Normal RemoteCleanupDisabled"},
		{rule: "spec empty and the Cluster gone: the finalizer stays as it was",
			o:      finalizerObservation{Backup: finBackup("", withFinalizer)},
			action: finNothing},
		{rule: "spec empty and the Cluster being deleted: the finalizer stays as it was",
			o:      finalizerObservation{Backup: finBackup("", withFinalizer), Cluster: goingCluster("")},
			action: finNothing},
		{rule: "deleted without the finalizer: nothing (keep)",
			o:      finalizerObservation{Backup: func() *v1.Backup { b := finBackup(v1.DeletionPolicyKeep, deleting); b.Finalizers = nil; return b }()},
			action: finNothing},
		{rule: "deleted with spec keep and the finalizer still on: removed, remote data untouched",
			o:      finalizerObservation{Now: finNow, Backup: finBackup(v1.DeletionPolicyKeep, deleting)},
			action: finRemove, event: "Normal RemoteObjectsKept"},
		{rule: "deleted with spec delete: the recorded directory is deleted",
			o:      finalizerObservation{Now: finNow, Backup: finBackup(v1.DeletionPolicyDelete, deleting)},
			action: finCleanup},
		{rule: "deleted with spec empty and the finalizer (the Cluster's default was delete): cleaned up, even with the Cluster gone",
			o:      finalizerObservation{Now: finNow, Backup: finBackup("", deleting)},
			action: finCleanup},
		{rule: "deleted with spec empty and the Cluster's default still delete: cleaned up",
			o:      finalizerObservation{Now: finNow, Backup: finBackup("", deleting), Cluster: finCluster(v1.DeletionPolicyDelete)},
			action: finCleanup},
		{rule: "deleted with spec empty and the Cluster's default turned to keep before the finalizer went: data kept",
			o:      finalizerObservation{Now: finNow, Backup: finBackup("", deleting), Cluster: finCluster(v1.DeletionPolicyKeep)},
			action: finRemove, event: "Normal RemoteObjectsKept"},
		{rule: "deleted with spec empty and the Cluster being deleted: the finalizer's delete stands",
			o:      finalizerObservation{Now: finNow, Backup: finBackup("", deleting), Cluster: goingCluster("")},
			action: finCleanup},
		{rule: "the bypass annotation removes the finalizer without deleting",
			o:      finalizerObservation{Now: finNow, Backup: finBackup(v1.DeletionPolicyDelete, deleting, bypassed)},
			action: finRemove, reason: v1.ReasonCleanupBypassed, status: metav1.ConditionTrue, event: "Normal RemoteCleanupBypassed"},
		{rule: "never recorded a destination: nothing to delete, the finalizer is removed",
			o:      finalizerObservation{Now: finNow, Backup: finBackup(v1.DeletionPolicyDelete, deleting, noDestination)},
			action: finRemove, reason: v1.ReasonCleanupDone, status: metav1.ConditionTrue, event: "Normal RemoteCleanupDone"},
		{rule: "referenced by a Cluster's bootstrap.recovery: refused, the finalizer stays",
			o:      finalizerObservation{Now: finNow, Backup: finBackup(v1.DeletionPolicyDelete, deleting), ReferencedBy: []string{"restored"}},
			action: finWait, reason: v1.ReasonCleanupRefused, status: metav1.ConditionFalse,
			event: "Warning RemoteCleanupRefused", requeue: cleanupRefusedRecheck},
		{rule: "referenced but bypassed: the finalizer is removed without deleting",
			o: finalizerObservation{Now: finNow, Backup: finBackup(v1.DeletionPolicyDelete, deleting, bypassed),
				ReferencedBy: []string{"restored"}},
			action: finRemove, reason: v1.ReasonCleanupBypassed, status: metav1.ConditionTrue, event: "Normal RemoteCleanupBypassed"},
		{rule: "deleted while running: its Job is deleted before the partial upload",
			o: finalizerObservation{Now: finNow, Backup: finBackup(v1.DeletionPolicyDelete, deleting, runningAt(v1.BackupPhaseRunning)),
				Job: activeJob},
			action: finDeleteJob, reason: v1.ReasonCleanupWaitingForJob, status: metav1.ConditionFalse,
			event: "Normal StoppingJob", requeue: cleanupJobPoll},
		{rule: "deleted while running, its Job already going: wait",
			o: finalizerObservation{Now: finNow, Backup: finBackup(v1.DeletionPolicyDelete, deleting, runningAt(v1.BackupPhaseRunning)),
				Job: func() *batchv1.Job {
					j := activeJob.DeepCopy()
					j.DeletionTimestamp = &metav1.Time{Time: bkT0}
					return j
				}()},
			action: finWait, reason: v1.ReasonCleanupWaitingForJob, status: metav1.ConditionFalse, requeue: cleanupJobPoll},
		{rule: "deleted while running, its Job gone: the partial upload is deleted",
			o:      finalizerObservation{Now: finNow, Backup: finBackup(v1.DeletionPolicyDelete, deleting, runningAt(v1.BackupPhaseRunning))},
			action: finCleanup},
		{rule: "the credential Secrets are gone: blocked with a Warning saying how to bypass, backoff",
			o: finalizerObservation{Now: finNow, Backup: finBackup(v1.DeletionPolicyDelete, deleting),
				StoreErr: errors.New(`credentials: Secret "s3" not found`)},
			action: finWait, reason: v1.ReasonCleanupUnresolved, status: metav1.ConditionFalse,
			event: "Warning RemoteCleanupBlocked", requeue: cleanupMinBackoff},
		{rule: "a recorded directory that is not this Backup's is never deleted",
			o: finalizerObservation{Now: finNow, Backup: finBackup(v1.DeletionPolicyDelete, deleting,
				func(b *v1.Backup) { b.Status.DestinationPath = "p/db/other/X/" })},
			action: finWait, reason: v1.ReasonCleanupUnresolved, status: metav1.ConditionFalse,
			event: "Warning RemoteCleanupBlocked", requeue: cleanupMinBackoff},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			d := decideFinalizer(tc.o)
			checkFinDecision(t, d, tc.action, tc.reason, tc.status, tc.event, tc.requeue)
			if tc.action == finCleanup && d.Ref != (objectstore.BackupRef{Cluster: "db", Name: "b1", ID: "X"}) {
				t.Errorf("ref %+v", d.Ref)
			}
			if tc.event == "Warning RemoteCleanupBlocked" || tc.event == "Warning RemoteCleanupRefused" {
				if !strings.Contains(d.Events[0].Message, v1.RemoteCleanupBypassAnnotation+"=true") {
					t.Errorf("the Warning does not say how to bypass: %s", d.Events[0].Message)
				}
			}
		})
	}
}

func TestDecideCleanupResult(t *testing.T) {
	s3down := errors.New("503 Service Unavailable")
	for _, tc := range []struct {
		rule    string
		b       *v1.Backup
		err     error
		action  finalizerAction
		reason  string
		status  metav1.ConditionStatus
		event   string
		requeue time.Duration
	}{
		{rule: "deleted: the finalizer is removed with a Normal Event",
			b: finBackup(v1.DeletionPolicyDelete, deleting), action: finRemove,
			reason: v1.ReasonCleanupDone, status: metav1.ConditionTrue, event: "Normal RemoteCleanupDone"},
		{rule: "the first failure: CleanupFailed, Warning, retried after the minimum backoff",
			b: finBackup(v1.DeletionPolicyDelete, deleting), err: s3down, action: finWait,
			reason: v1.ReasonCleanupFailed, status: metav1.ConditionFalse, event: "Warning RemoteCleanupFailed", requeue: cleanupMinBackoff},
		{rule: "failing for 40s: retried after 40s (the wait doubles)",
			b: finBackup(v1.DeletionPolicyDelete, deleting, failingSince(40*time.Second)), err: s3down, action: finWait,
			reason: v1.ReasonCleanupFailed, status: metav1.ConditionFalse, event: "Warning RemoteCleanupFailed", requeue: 40 * time.Second},
		{rule: "failing for an hour: the wait is capped",
			b: finBackup(v1.DeletionPolicyDelete, deleting, failingSince(time.Hour)), err: s3down, action: finWait,
			reason: v1.ReasonCleanupFailed, status: metav1.ConditionFalse, event: "Warning RemoteCleanupFailed", requeue: cleanupMaxBackoff},
		{rule: "another namespace's directory: refused, ForeignBackup, Warning with the bypass, retried with backoff",
			b: finBackup(v1.DeletionPolicyDelete, deleting), err: fmt.Errorf("%w: its metadata.json names namespace team-b", errForeignBackup),
			action: finWait, reason: v1.ReasonCleanupForeign, status: metav1.ConditionFalse, event: "Warning RemoteCleanupBlocked",
			requeue: cleanupMinBackoff},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			d := decideCleanupResult(finalizerObservation{Now: finNow, Backup: tc.b}, tc.err)
			checkFinDecision(t, d, tc.action, tc.reason, tc.status, tc.event, tc.requeue)
			if tc.err != nil && !strings.Contains(d.Condition.Message, tc.err.Error()) {
				t.Errorf("the condition does not carry the error: %s", d.Condition.Message)
			}
		})
	}
}

func checkFinDecision(t *testing.T, d finalizerDecision, action finalizerAction, reason string,
	status metav1.ConditionStatus, event string, requeue time.Duration,
) {
	t.Helper()
	if d.Action != action {
		t.Fatalf("action %s, want %s", d.Action, action)
	}
	switch {
	case reason == "" && d.Condition != nil:
		t.Errorf("condition %+v, want none", d.Condition)
	case reason != "" && (d.Condition == nil || d.Condition.Reason != reason || d.Condition.Status != status ||
		d.Condition.Type != v1.BackupRemoteCleanup || d.Condition.Message == ""):
		t.Errorf("condition %+v, want %s %s", d.Condition, status, reason)
	}
	var got []string
	for _, e := range d.Events {
		got = append(got, e.Kind.Type+" "+e.Kind.Reason)
	}
	if want := []string{event}; event == "" && len(got) != 0 || event != "" && strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("events %v, want %q", got, event)
	}
	if d.RequeueAfter != requeue {
		t.Errorf("requeue after %s, want %s", d.RequeueAfter, requeue)
	}
}

// TestDecideCleanupReadFailed: a cleanup that cannot read its inputs from the API server (RBAC
// refuses, the server fails) deletes nothing and says so, in the condition and a Warning, and
// retries with the cleanup's backoff, which grows while it keeps failing.
func TestDecideCleanupReadFailed(t *testing.T) {
	forbidden := errors.New(`clusters.mysql.cloudnative-mysql.io is forbidden: User "operator" cannot list resource "clusters"`)
	for _, tc := range []struct {
		rule    string
		b       *v1.Backup
		requeue time.Duration
	}{
		{"the first failure: retried after the minimum backoff", finBackup(v1.DeletionPolicyDelete, deleting), cleanupMinBackoff},
		{"failing for 40s: retried after 40s", finBackup(v1.DeletionPolicyDelete, deleting, failingSince(40*time.Second)), 40 * time.Second},
		{"failing for an hour: the wait is capped", finBackup(v1.DeletionPolicyDelete, deleting, failingSince(time.Hour)), cleanupMaxBackoff},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			d := decideCleanupReadFailed(finalizerObservation{Now: finNow, Backup: tc.b}, forbidden)
			checkFinDecision(t, d, finWait, v1.ReasonCleanupFailed, metav1.ConditionFalse, "Warning RemoteCleanupFailed", tc.requeue)
			if !strings.Contains(d.Condition.Message, "forbidden") || !strings.Contains(d.Events[0].Message, "forbidden") {
				t.Errorf("the condition or the Event does not carry the error: %s / %s", d.Condition.Message, d.Events[0].Message)
			}
		})
	}
}

func TestCleanupConditionWritesDoNotRequeue(t *testing.T) {
	base := finBackup(v1.DeletionPolicyDelete, deleting)
	for _, tc := range []struct {
		rule    string
		change  func(*v1.Backup)
		trigger bool
	}{
		{rule: "only the RemoteCleanup condition (and the resource version) changed: no reconcile, the backoff decides",
			change: failingSince(time.Minute), trigger: false},
		{rule: "the bypass annotation was set: reconciled", change: bypassed, trigger: true},
		{rule: "the deletion policy changed: reconciled",
			change: func(b *v1.Backup) { b.Spec.DeletionPolicy = v1.DeletionPolicyKeep }, trigger: true},
		{rule: "another condition changed: reconciled", change: func(b *v1.Backup) {
			b.Status.Conditions = []metav1.Condition{{Type: v1.BackupArtifactsAvailable, Status: metav1.ConditionFalse}}
		}, trigger: true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			cur := base.DeepCopy()
			tc.change(cur)
			cur.ResourceVersion = "2"
			got := skipCleanupConditionWrites().Update(event.UpdateEvent{ObjectOld: base, ObjectNew: cur})
			if got != tc.trigger {
				t.Errorf("reconcile %v, want %v", got, tc.trigger)
			}
		})
	}
}
