package backup

import (
	"errors"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

var bkT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func bkBackup(phase v1.BackupPhase, job string) *v1.Backup {
	b := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "b1", Namespace: "ns", CreationTimestamp: metav1.NewTime(bkT0)},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "db"}, Method: v1.BackupMethodClone,
			Target: v1.BackupTargetPreferStandby, Timeout: &metav1.Duration{Duration: time.Hour}},
		Status: v1.BackupStatus{Phase: phase, JobName: job, DestinationPath: "p/db/b1/X/"}}
	if phase == v1.BackupPhaseRunning {
		s := metav1.NewTime(bkT0.Add(time.Minute))
		b.Status.StartedAt = &s
	}
	return b
}

func bkJob(cond batchv1.JobConditionType) *batchv1.Job {
	j := &batchv1.Job{}
	if cond != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
	}
	return j
}

func bkMeta() *objectstore.Metadata {
	return &objectstore.Metadata{SHA256: "aa", Size: 10, GTIDExecuted: "u:1-5", BinlogFile: "binlog.000001", ServerVersion: "9.7"}
}

// bkCluster is the Cluster db with an object store and its primary db-1.
func bkCluster() *v1.Cluster {
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "uid-db"},
		Spec: v1.ClusterSpec{ImageName: "mysql:test", Backup: &v1.BackupConfiguration{ObjectStore: &v1.ObjectStoreConfiguration{
			Bucket: "bk", Path: "prod", Endpoint: "http://s3:9000",
			Credentials: v1.S3Credentials{AccessKeyID: v1.SecretKeySelector{Name: "s3", Key: "id"},
				SecretAccessKey: v1.SecretKeySelector{Name: "s3", Key: "secret"}}}}},
		Status: v1.ClusterStatus{CurrentPrimary: "db-1"}}
	c.Status.ObjectStoreLocation = &v1.ObjectStoreLocationStatus{Location: c.ObjectStoreLocation(),
		Phase: v1.LocationClaimed, HolderUID: "uid-db", Holder: "ns/db"}
	return c
}

// locationIn is bkCluster whose location claim is in phase, held by holder.
func locationIn(phase v1.LocationPhase, holder string) *v1.Cluster {
	c := bkCluster()
	c.Status.ObjectStoreLocation.Phase, c.Status.ObjectStoreLocation.HolderUID = phase, holder
	return c
}

// noPrimary is bkCluster before an instance took the primary role.
func noPrimary() *v1.Cluster {
	c := bkCluster()
	c.Status.CurrentPrimary = ""
	return c
}

// storeless is bkCluster without an object store.
func storeless() *v1.Cluster {
	c := bkCluster()
	c.Spec.Backup = nil
	return c
}

// healthyDB2 is the instance db-2, a healthy replica: the target prefer-standby takes.
var healthyDB2 = []Candidate{primaryCand("db-1", true), replica("db-2", 0, true)}

func TestDecideBackup(t *testing.T) {
	now := bkT0.Add(5 * time.Minute)
	late := bkT0.Add(2 * time.Hour)
	for _, tc := range []struct {
		rule      string
		o         Observation
		action    Action
		phase     v1.BackupPhase
		event     string
		deleteJob bool
		err       bool          // the reconcile fails, to be retried with backoff
		requeue   time.Duration // when set, the RequeueAfter wanted
	}{
		{rule: "a scheduled Backup's first step waits until ScheduledFirstLook after its creation, nothing written",
			o:      Observation{Now: bkT0.Add(500 * time.Millisecond), Backup: scheduled(bkBackup("", "")), FirstLook: ScheduledFirstLook},
			action: ActNothing, requeue: 1500 * time.Millisecond},
		{rule: "a scheduled Backup is acted on once ScheduledFirstLook has passed since its creation",
			o:      Observation{Now: bkT0.Add(ScheduledFirstLook), Backup: scheduled(bkBackup("", "")), FirstLook: ScheduledFirstLook},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "ClusterNotFound"},
		{rule: "a completed Backup is never acted on, even with its Job gone",
			o: Observation{Now: now, Backup: bkBackup(v1.BackupPhaseCompleted, "b1")}, action: ActNothing},
		{rule: "a failed Backup is never acted on, even past its timeout",
			o: Observation{Now: late, Backup: bkBackup(v1.BackupPhaseFailed, "b1")}, action: ActNothing},
		{rule: "a missing Cluster fails fast",
			o:      Observation{Now: now, Backup: bkBackup("", "")},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "ClusterNotFound"},
		{rule: "a Cluster without an object store fails fast",
			o:      Observation{Now: now, Backup: bkBackup("", ""), Cluster: storeless(), StoreErr: errors.New("spec.backup.objectStore is not set")},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "NoObjectStore"},
		{rule: "no target yet: pending and retried",
			o:      Observation{Now: now, Backup: bkBackup("", ""), Cluster: noPrimary()},
			action: ActPatchStatus, phase: v1.BackupPhasePending, event: "WaitingForTarget"},
		{rule: "no target within the timeout: failed",
			o:      Observation{Now: late, Backup: bkBackup(v1.BackupPhasePending, ""), Cluster: noPrimary()},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "TimedOut"},
		{rule: "a target: pending with the Job name, backup id and destination",
			o:      Observation{Now: now, Backup: bkBackup("", ""), Cluster: bkCluster(), Candidates: healthyDB2},
			action: ActPatchStatus, phase: v1.BackupPhasePending, event: "BackupPending"},
		{rule: "the Cluster's location held by another incarnation: failed fast with ObjectStoreInUse",
			o:      Observation{Now: now, Backup: bkBackup("", ""), Cluster: locationIn(v1.LocationInUse, "other-uid"), Candidates: healthyDB2},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "ObjectStoreInUse"},
		{rule: "the Cluster's location not claimed yet: pending and retried, no destination chosen",
			o:      Observation{Now: now, Backup: bkBackup("", ""), Cluster: locationIn(v1.LocationPending, ""), Candidates: healthyDB2},
			action: ActPatchStatus, phase: v1.BackupPhasePending, event: "WaitingForTarget"},
		{rule: "a claim recorded for another location (the path changed since): pending until the new one is claimed",
			o: Observation{Now: now, Backup: bkBackup("", ""), Cluster: func() *v1.Cluster {
				c := bkCluster()
				c.Spec.Backup.ObjectStore.Path = "elsewhere"
				return c
			}(), Candidates: healthyDB2},
			action: ActPatchStatus, phase: v1.BackupPhasePending, event: "WaitingForTarget"},
		{rule: "a claim of another UID recorded as claimed (a stale status): pending, not started",
			o:      Observation{Now: now, Backup: bkBackup("", ""), Cluster: locationIn(v1.LocationClaimed, "other-uid"), Candidates: healthyDB2},
			action: ActPatchStatus, phase: v1.BackupPhasePending, event: "WaitingForTarget"},
		{rule: "pending without its Job: create it and run",
			o:      Observation{Now: now, Backup: bkBackup(v1.BackupPhasePending, "b1"), Cluster: bkCluster(), OperatorImage: "op:1"},
			action: ActCreateJob, phase: v1.BackupPhaseRunning, event: "BackupStarted"},
		{rule: "pending without its Job, its Cluster unreadable: retried, nothing written",
			o:      Observation{Now: now, Backup: bkBackup(v1.BackupPhasePending, "b1"), ClusterErr: errors.New("reading Cluster db: not found")},
			action: ActNothing, err: true},
		{rule: "pending without its Job, its Cluster lost the object store: retried, nothing written",
			o:      Observation{Now: now, Backup: bkBackup(v1.BackupPhasePending, "b1"), Cluster: storeless()},
			action: ActNothing, err: true},
		{rule: "pending without its Job past the timeout, its Cluster unreadable: failed",
			o:      Observation{Now: late, Backup: bkBackup(v1.BackupPhasePending, "b1"), ClusterErr: errors.New("reading Cluster db: not found")},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "TimedOut"},
		{rule: "pending with its Job already created: running",
			o:      Observation{Now: now, Backup: bkBackup(v1.BackupPhasePending, "b1"), Job: bkJob("")},
			action: ActPatchStatus, phase: v1.BackupPhaseRunning},
		{rule: "a Job of that name that is not this Backup's fails it",
			o:      Observation{Now: now, Backup: bkBackup(v1.BackupPhasePending, "b1"), Job: bkJob(""), JobForeign: true},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "JobFailed"},
		{rule: "running with its Job gone: failed, never recreated",
			o:      Observation{Now: now, Backup: bkBackup(v1.BackupPhaseRunning, "b1")},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "JobGone"},
		{rule: "running with its Job failed: failed with the Job's reason",
			o: Observation{Now: now, Backup: bkBackup(v1.BackupPhaseRunning, "b1"), Job: bkJob(batchv1.JobFailed),
				PodMessage: `{"error":"clone: connection refused"}`},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "JobFailed"},
		{rule: "running past the timeout: failed and the Job deleted",
			o:      Observation{Now: late, Backup: bkBackup(v1.BackupPhaseRunning, "b1"), Job: bkJob("")},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "TimedOut", deleteJob: true},
		{rule: "running within the timeout: wait",
			o: Observation{Now: now, Backup: bkBackup(v1.BackupPhaseRunning, "b1"), Job: bkJob("")}, action: ActNothing},
		{rule: "the Job succeeded and metadata.json exists: completed",
			o: Observation{Now: now, Backup: bkBackup(v1.BackupPhaseRunning, "b1"), Job: bkJob(batchv1.JobComplete),
				Metadata: bkMeta(), PodMessage: `{"checksum":"sha256:aa"}`},
			action: ActPatchStatus, phase: v1.BackupPhaseCompleted, event: "BackupCompleted"},
		{rule: "the Job succeeded without metadata.json: failed",
			o: Observation{Now: now, Backup: bkBackup(v1.BackupPhaseRunning, "b1"), Job: bkJob(batchv1.JobComplete),
				MetadataErr: objectstore.ErrNotFound},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "MetadataMissing"},
		{rule: "the Job reported another checksum than metadata.json: failed",
			o: Observation{Now: now, Backup: bkBackup(v1.BackupPhaseRunning, "b1"), Job: bkJob(batchv1.JobComplete),
				Metadata: bkMeta(), PodMessage: `{"checksum":"sha256:bb"}`},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "MetadataMissing"},
		{rule: "metadata.json written by a same-named Cluster of another namespace: failed, not completed on its backup",
			o: Observation{Now: now, Backup: bkBackup(v1.BackupPhaseRunning, "b1"), Job: bkJob(batchv1.JobComplete),
				Metadata:   func() *objectstore.Metadata { m := bkMeta(); m.Namespace = "team-b"; return m }(),
				PodMessage: `{"checksum":"sha256:aa"}`},
			action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "MetadataMissing"},
		{rule: "metadata.json naming the Backup's namespace: completed",
			o: Observation{Now: now, Backup: bkBackup(v1.BackupPhaseRunning, "b1"), Job: bkJob(batchv1.JobComplete),
				Metadata:   func() *objectstore.Metadata { m := bkMeta(); m.Namespace = "ns"; return m }(),
				PodMessage: `{"checksum":"sha256:aa"}`},
			action: ActPatchStatus, phase: v1.BackupPhaseCompleted, event: "BackupCompleted"},
		{rule: "the store cannot be read: retried",
			o: Observation{Now: now, Backup: bkBackup(v1.BackupPhaseRunning, "b1"), Job: bkJob(batchv1.JobComplete),
				MetadataErr: errors.New("connection refused")}, action: ActNothing},
		{rule: "xtrabackup is refused by this build",
			o: Observation{Now: now, Backup: func() *v1.Backup {
				b := bkBackup("", "")
				b.Spec.Method = v1.BackupMethodXtraBackup
				return b
			}(), Cluster: bkCluster(), Candidates: healthyDB2}, action: ActPatchStatus, phase: v1.BackupPhaseFailed, event: "Unsupported"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			d := Decide(tc.o)
			if d.Action != tc.action || (d.DeleteJob != nil) != tc.deleteJob || (d.Err != nil) != tc.err {
				t.Fatalf("action %v delete %v error %v, want %v %v %v", d.Action, d.DeleteJob != nil, d.Err, tc.action, tc.deleteJob, tc.err)
			}
			if tc.deleteJob && d.DeleteJob != tc.o.Job {
				t.Errorf("deletes %+v, want the Backup's Job", d.DeleteJob)
			}
			if (d.Action == ActCreateJob) != (d.CreateJob != nil) {
				t.Errorf("action %v with the Job %+v", d.Action, d.CreateJob)
			}
			if tc.action != ActNothing && d.Status.Phase != tc.phase {
				t.Errorf("phase %q, want %q (%s)", d.Status.Phase, tc.phase, d.Status.Error)
			}
			if tc.requeue != 0 && d.RequeueAfter != tc.requeue {
				t.Errorf("requeue after %s, want %s", d.RequeueAfter, tc.requeue)
			}
			if tc.event != "" && (len(d.Events) != 1 || d.Events[0].Kind.Reason != tc.event) {
				t.Errorf("events %+v, want %s", d.Events, tc.event)
			}
			if d.Status.Phase == v1.BackupPhaseFailed && (d.Status.Error == "" || d.Status.CompletedAt == nil) {
				t.Errorf("failed without a reason or time: %+v", d.Status)
			}
		})
	}
}

// scheduled labels b as a ScheduledBackup's child.
func scheduled(b *v1.Backup) *v1.Backup {
	b.Labels = map[string]string{v1.ScheduledBackupLabel: "nightly"}
	return b
}

func TestFirstLookWait(t *testing.T) {
	for _, tc := range []struct {
		rule      string
		firstLook time.Duration
		now       time.Time
		b         *v1.Backup
		want      time.Duration
	}{
		{"a scheduled Backup just created waits the rest of the first look", ScheduledFirstLook, bkT0.Add(300 * time.Millisecond), scheduled(bkBackup("", "")), 1700 * time.Millisecond},
		{"a scheduled Backup whose first look has passed does not wait", ScheduledFirstLook, bkT0.Add(3 * time.Second), scheduled(bkBackup("", "")), 0},
		{"a Backup created by hand does not wait", ScheduledFirstLook, bkT0, bkBackup("", ""), 0},
		{"a scheduled Backup with a phase does not wait", ScheduledFirstLook, bkT0, scheduled(bkBackup(v1.BackupPhasePending, "")), 0},
		{"a scheduled Backup with a Job name does not wait", ScheduledFirstLook, bkT0, scheduled(bkBackup("", "b1")), 0},
		{"without a first look nothing waits", 0, bkT0, scheduled(bkBackup("", "")), 0},
		{"a clock behind the creation waits the first look at most", ScheduledFirstLook, bkT0.Add(-time.Hour), scheduled(bkBackup("", "")), ScheduledFirstLook},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := FirstLookWait(tc.firstLook, tc.now, tc.b); got != tc.want {
				t.Errorf("wait %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDecideBackupRecordsWhereAndWhat(t *testing.T) {
	cluster := bkCluster()
	spec := cluster.Spec.Backup.ObjectStore
	d := Decide(Observation{Now: bkT0.Add(time.Minute), Backup: bkBackup("", ""), Cluster: cluster, Candidates: healthyDB2,
		Store: objectstore.Config{Endpoint: "s3:9000", Bucket: "bk", Path: "prod"}})
	st := d.Status
	if st.InstanceName != "db-2" || st.JobName != "b1" || st.BackupID != "20260101T000100Z" ||
		st.DestinationPath != "prod/db/b1/20260101T000100Z/" || st.Endpoint != "http://s3:9000" || st.Bucket != "bk" {
		t.Errorf("status %+v", st)
	}
	if st.ObjectStore == nil || st.ObjectStore.Credentials.AccessKeyID.Name != "s3" || st.ObjectStore == spec {
		t.Errorf("the object store configuration is not recorded as a copy for cleanup: %+v", st.ObjectStore)
	}
	c := Decide(Observation{Now: bkT0.Add(time.Minute), Backup: bkBackup(v1.BackupPhaseRunning, "b1"),
		Job: bkJob(batchv1.JobComplete), Metadata: bkMeta()})
	if s := c.Status; s.Checksum != "sha256:aa" || s.Size != 10 || s.GTIDExecuted != "u:1-5" || s.BinlogFile != "binlog.000001" ||
		s.ServerVersion != "9.7" || s.CompletedAt == nil {
		t.Errorf("completed status %+v", s)
	}
	stored := meta.FindStatusCondition(c.Status.Conditions, v1.BackupArtifactsAvailable)
	if stored == nil || stored.Status != metav1.ConditionTrue || stored.Reason != v1.ReasonArtifactsStored {
		t.Errorf("a completed Backup's artifacts are not marked Stored: %+v", c.Status.Conditions)
	}
}
