package backup

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// other is a Backup of Cluster db created at bkT0 plus age, of schedule (on demand when ""), in
// phase with a Job name when started.
func other(name string, age time.Duration, schedule string, phase v1.BackupPhase, started bool) v1.Backup {
	b := v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(bkT0.Add(age))},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "db"}}, Status: v1.BackupStatus{Phase: phase}}
	if schedule != "" {
		b.Labels = map[string]string{v1.ScheduledBackupLabel: schedule}
	}
	if started {
		b.Status.JobName = name
	}
	return b
}

func TestQueuePosition(t *testing.T) {
	now := metav1.NewTime(bkT0)
	deleting := other("gone", -time.Hour, "", v1.BackupPhasePending, false) // deleted before it started
	deleting.DeletionTimestamp = &now
	deletingStarted := other("stopping", -time.Hour, "", v1.BackupPhaseRunning, true) // its Job may still run
	deletingStarted.DeletionTimestamp = &now
	for _, tc := range []struct {
		rule         string
		b            v1.Backup
		others       []v1.Backup
		supersededBy string
		behind       string
	}{
		{rule: "alone: starts", b: other("b", 0, "", "", false)},
		{rule: "another Backup of the Cluster runs: waits behind it",
			b: other("b", 0, "", "", false), others: []v1.Backup{other("r", -time.Hour, "", v1.BackupPhaseRunning, true)}, behind: "r"},
		{rule: "another one has its Job name but is still pending (its Job being created): waits behind it",
			b: other("b", 0, "", "", false), others: []v1.Backup{other("p", -time.Hour, "", v1.BackupPhasePending, true)}, behind: "p"},
		{rule: "finished Backups, and one deleted before it started, do not hold the queue",
			b: other("b", 0, "", "", false), others: []v1.Backup{other("done", -time.Hour, "", v1.BackupPhaseCompleted, true),
				other("failed", -time.Hour, "", v1.BackupPhaseFailed, true), other("sup", -time.Hour, "s", v1.BackupPhaseSuperseded, false), deleting}},
		{rule: "a Backup being deleted after it started holds the queue until it is gone (its Job may still run)",
			b: other("b", 0, "", "", false), others: []v1.Backup{deletingStarted}, behind: "stopping"},
		{rule: "on-demand Backups run in order: an older waiting one goes first",
			b: other("b", 0, "", v1.BackupPhasePending, false), others: []v1.Backup{other("older", -time.Minute, "", v1.BackupPhasePending, false)}, behind: "older"},
		{rule: "a newer waiting Backup does not hold an older one",
			b: other("b", 0, "", v1.BackupPhasePending, false), others: []v1.Backup{other("newer", time.Minute, "", v1.BackupPhasePending, false)}},
		{rule: "the same creation second: the name orders",
			b: other("b", 0, "", "", false), others: []v1.Backup{other("a", 0, "", "", false)}, behind: "a"},
		{rule: "a waiting scheduled Backup with a newer waiting one of its schedule is superseded by the newest",
			b: other("n-1", 0, "nightly", v1.BackupPhasePending, false),
			others: []v1.Backup{other("n-2", time.Hour, "nightly", v1.BackupPhasePending, false), other("n-3", 2*time.Hour, "nightly", "", false),
				other("r", -time.Hour, "", v1.BackupPhaseRunning, true)},
			supersededBy: "n-3"},
		{rule: "a newer Backup of another schedule supersedes nothing",
			b: other("n-1", 0, "nightly", v1.BackupPhasePending, false), others: []v1.Backup{other("h-1", time.Hour, "hourly", "", false)}},
		{rule: "a newer Backup of its schedule that already started does not supersede it: it waits behind it",
			b: other("n-1", 0, "nightly", v1.BackupPhasePending, false), others: []v1.Backup{other("n-2", time.Hour, "nightly", v1.BackupPhaseRunning, true)},
			behind: "n-2"},
		{rule: "an older waiting scheduled Backup that will be superseded holds no one",
			b:      other("od", 0, "", "", false),
			others: []v1.Backup{other("n-1", -time.Hour, "nightly", v1.BackupPhasePending, false), other("n-2", time.Hour, "nightly", "", false)}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			sup, behind := queuePosition(&tc.b, tc.others)
			if name(sup) != tc.supersededBy || name(behind) != tc.behind {
				t.Errorf("superseded by %q, behind %q; want %q, %q", name(sup), name(behind), tc.supersededBy, tc.behind)
			}
		})
	}
}

func name(b *v1.Backup) string {
	if b == nil {
		return ""
	}
	return b.Name
}

func TestDecideQueue(t *testing.T) {
	now := bkT0.Add(time.Minute)
	running := []v1.Backup{other("r", -time.Hour, "", v1.BackupPhaseRunning, true)}

	d := Decide(Observation{Now: now, Backup: bkBackup("", ""), Cluster: bkCluster(), Candidates: healthyDB2, Others: running})
	q := meta.FindStatusCondition(d.Status.Conditions, v1.BackupQueued)
	if d.Action != ActPatchStatus || d.Status.Phase != v1.BackupPhasePending || d.Status.JobName != "" || q == nil ||
		q.Status != metav1.ConditionTrue || len(d.Events) != 1 || d.Events[0].Kind.Reason != "Queued" || d.RequeueAfter != waitInterval {
		t.Fatalf("behind a running Backup: %+v, events %v", d, d.Events)
	}
	waiting := bkBackup(v1.BackupPhasePending, "")
	waiting.Status = d.Status
	if d := Decide(Observation{Now: now.Add(time.Second), Backup: waiting, Cluster: bkCluster(), Candidates: healthyDB2, Others: running}); d.Action != ActNothing || len(d.Events) != 0 {
		t.Errorf("still behind the same Backup: %+v, want nothing written", d)
	}
	other2 := []v1.Backup{other("r2", -time.Hour, "", v1.BackupPhaseRunning, true)}
	if d := Decide(Observation{Now: now.Add(time.Second), Backup: waiting, Cluster: bkCluster(), Candidates: healthyDB2, Others: other2}); d.Action != ActPatchStatus ||
		len(d.Events) != 1 || !strings.Contains(meta.FindStatusCondition(d.Status.Conditions, v1.BackupQueued).Message, "r2") {
		t.Errorf("behind another Backup than before: %+v, want the condition and an Event naming r2", d)
	}
	late := bkT0.Add(3 * time.Hour) // past the one-hour timeout since its creation, while queued
	d = Decide(Observation{Now: late, Backup: waiting, Cluster: bkCluster(), Candidates: healthyDB2})
	q = meta.FindStatusCondition(d.Status.Conditions, v1.BackupQueued)
	if d.Status.Phase != v1.BackupPhasePending || d.Status.JobName == "" || q == nil || q.Status != metav1.ConditionFalse {
		t.Fatalf("the queue emptied: %+v, want started with Queued=False (the timeout does not count the queue)", d.Status)
	}
	// What the start writes is fed back: the next step (the Job) is not failed for the time queued.
	left := waiting.DeepCopy()
	left.Status = d.Status
	if d2 := Decide(Observation{Now: late.Add(time.Second), Backup: left, Cluster: bkCluster(), OperatorImage: "op:1"}); d2.Action != ActCreateJob ||
		d2.Status.Phase != v1.BackupPhaseRunning {
		t.Fatalf("the step after leaving the queue: %+v, want the Job created (its timeout counts from leaving the queue)", d2.Status)
	}
	if d3 := Decide(Observation{Now: late.Add(2 * time.Hour), Backup: left, Cluster: bkCluster(), OperatorImage: "op:1"}); d3.Status.Phase != v1.BackupPhaseFailed {
		t.Errorf("not started within the timeout after leaving the queue: %+v, want failed", d3.Status)
	}
	d = Decide(Observation{Now: late, Backup: waiting, Cluster: noPrimary(), Candidates: nil})
	if d.Status.Phase != v1.BackupPhasePending || d.Action != ActPatchStatus {
		t.Fatalf("out of the queue without a target: %+v, want pending, left the queue", d)
	}
	sup := Decide(Observation{Now: now, Backup: scheduled(bkBackup(v1.BackupPhasePending, "")), Cluster: bkCluster(), Candidates: healthyDB2,
		Others: append(running, other("nightly-2", time.Hour, "nightly", "", false))})
	if sup.Status.Phase != v1.BackupPhaseSuperseded || sup.Status.CompletedAt == nil || len(sup.Events) != 1 || sup.Events[0].Kind.Reason != "Superseded" {
		t.Fatalf("a newer Backup of its schedule waits: %+v, want superseded", sup)
	}
}
