package verification

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

var t0 = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// cluster is a Cluster created two days before t0 that holds its location and archives, with the
// verification v.
func cluster(v *v1.BackupVerification) *v1.Cluster {
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "c-uid",
		CreationTimestamp: metav1.NewTime(t0.Add(-48 * time.Hour))}}
	c.Spec.Backup = &v1.BackupConfiguration{ObjectStore: &v1.ObjectStoreConfiguration{Bucket: "bk", Path: "prod"},
		Verification: v}
	c.Status.ObjectStoreLocation = &v1.ObjectStoreLocationStatus{Location: c.ObjectStoreLocation(), Phase: v1.LocationClaimed,
		HolderUID: "c-uid"}
	c.Status.BinlogArchive = &v1.BinlogArchiveStatus{}
	return c
}

// completed is a Backup of db that completed at.
func completed(name string, at time.Time) v1.Backup {
	b := v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	b.Spec.Cluster.Name = "db"
	b.Status = v1.BackupStatus{Phase: v1.BackupPhaseCompleted, CompletedAt: mt(at), BackupID: at.Format("20060102T150405Z"),
		DestinationPath: "prod/db/" + name + "/" + at.Format("20060102T150405Z") + "/"}
	return b
}

func job(name, backup string, conds ...batchv1.JobCondition) Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))}}
	j.Status.Conditions = conds
	j.Status.StartTime = mt(t0.Add(-time.Hour))
	dl := int64(7200)
	j.Spec.ActiveDeadlineSeconds = &dl
	return Job{Job: j, Backup: backup, BackupCompletedAt: mt(t0.Add(-3 * time.Hour))}
}

var (
	jobFailed   = batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}
	jobDeadline = batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded}
	jobComplete = batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}
)

func result(r backupjob.VerifyResult) string {
	b, _ := json.Marshal(r)
	return string(b)
}

func every(n int32) *int32 { return &n }

func TestDecide(t *testing.T) {
	daily := &v1.BackupVerification{Schedule: "0 0 3 * * *"}
	lastAt := func(started, backupCompleted time.Time) *v1.LastVerifiedBackup {
		return &v1.LastVerifiedBackup{Name: "b-old", JobName: "b-old-verify-1", Passed: true, Reason: v1.ReasonVerificationPassed,
			StartedAt: mt(started), CompletedAt: mt(started.Add(time.Minute)), BackupCompletedAt: mt(backupCompleted)}
	}
	withLast := func(c *v1.Cluster, l *v1.LastVerifiedBackup) *v1.Cluster { c.Status.LastVerifiedBackup = l; return c }
	twoBackups := []v1.Backup{completed("b1", t0.Add(-5*time.Hour)), completed("b2", t0.Add(-2*time.Hour))}
	passed := job("b2-verify-aa", "b2", jobComplete)
	passed.Message = result(backupjob.VerifyResult{Passed: true, GTIDExecuted: "u:1-10", Tables: 40, TablesChecked: 40, Rows: 1234, Transactions: 5, Segments: 1})
	failedRes := job("b2-verify-bb", "b2", jobFailed)
	failedRes.Message = result(backupjob.VerifyResult{Reason: v1.ReasonVerificationTable, Message: "a table of the restored data failed CHECK TABLE: `shop`.`orders`"})

	for _, tc := range []struct {
		rule    string
		o       Observation
		check   func(t *testing.T, d Decision)
		started string // the Backup a verification starts on; "" for none
	}{
		{rule: "no verification configured: nothing starts and the condition goes",
			o: Observation{Cluster: cluster(nil), Backups: twoBackups},
			check: func(t *testing.T, d Decision) {
				if d.Condition != nil {
					t.Errorf("condition %+v", d.Condition)
				}
			}},
		{rule: "never verified and a slot passed since creation: the newest completed backup is verified", started: "b2",
			o: Observation{Cluster: cluster(daily), Backups: twoBackups},
			check: func(t *testing.T, d Decision) {
				if d.Condition.Status != metav1.ConditionUnknown || d.Condition.Reason != v1.ReasonVerificationPending {
					t.Errorf("condition %+v", d.Condition)
				}
				if d.Start.JobName != specs.VerificationJobName("b2", time.Date(2026, 3, 10, 3, 0, 0, 0, time.UTC)) {
					t.Errorf("job %s, want the name of slot 03:00", d.Start.JobName)
				}
			}},
		{rule: "due without a completed backup: nothing starts until one completes",
			o: Observation{Cluster: cluster(daily)}},
		{rule: "no slot since the last verification started: nothing starts, looked at again at the next slot",
			o: Observation{Cluster: withLast(cluster(daily), lastAt(t0.Add(-8*time.Hour), t0.Add(-9*time.Hour))), Backups: twoBackups},
			check: func(t *testing.T, d Decision) {
				if d.RequeueAfter != 15*time.Hour {
					t.Errorf("requeue after %s, want 15h (the next 03:00)", d.RequeueAfter)
				}
			}},
		{rule: "a slot passed since the last verification started: the newest backup is verified", started: "b2",
			o: Observation{Cluster: withLast(cluster(daily), lastAt(t0.Add(-30*time.Hour), t0.Add(-31*time.Hour))), Backups: twoBackups}},
		{rule: "everyBackups 3 with two backups completed after the verified one: nothing starts",
			o: Observation{Cluster: withLast(cluster(&v1.BackupVerification{EveryBackups: every(3)}), lastAt(t0.Add(-8*time.Hour), t0.Add(-9*time.Hour))),
				Backups: twoBackups}},
		{rule: "everyBackups 2 with two backups completed after the verified one: the newest is verified", started: "b2",
			o: Observation{Cluster: withLast(cluster(&v1.BackupVerification{EveryBackups: every(2)}), lastAt(t0.Add(-8*time.Hour), t0.Add(-9*time.Hour))),
				Backups: twoBackups}},
		{rule: "everyBackups counts only backups completed after the verified one", started: "",
			o: Observation{Cluster: withLast(cluster(&v1.BackupVerification{EveryBackups: every(2)}), lastAt(t0.Add(-3*time.Hour), t0.Add(-4*time.Hour))),
				Backups: twoBackups}},
		{rule: "a verification Job runs: no second one starts",
			o: Observation{Cluster: cluster(daily), Backups: twoBackups, Jobs: []Job{job("b1-verify-cc", "b1")}}},
		{rule: "a finished Job that passed is recorded with its figures, and nothing starts in the same pass",
			o: Observation{Cluster: cluster(daily), Backups: twoBackups, Jobs: []Job{passed}},
			check: func(t *testing.T, d Decision) {
				o := d.Record[0]
				if !o.Status.Passed || o.Status.Reason != v1.ReasonVerificationPassed || o.Status.Rows != 1234 ||
					o.Status.TablesChecked != 40 || o.Status.ReplayedTransactions != 5 || !strings.Contains(o.Message, "40 of 40 tables") {
					t.Errorf("outcome %+v: %s", o.Status, o.Message)
				}
				if d.Condition.Status != metav1.ConditionTrue {
					t.Errorf("condition %+v", d.Condition)
				}
			}},
		{rule: "a finished Job whose result failed: its reason on the Backup and the Cluster",
			o: Observation{Cluster: cluster(daily), Backups: twoBackups, Jobs: []Job{failedRes}},
			check: func(t *testing.T, d Decision) {
				o := d.Record[0]
				if o.Status.Passed || o.Status.Reason != v1.ReasonVerificationTable || !strings.Contains(o.Message, "orders") {
					t.Errorf("outcome %+v: %s", o.Status, o.Message)
				}
				if d.Condition.Status != metav1.ConditionFalse || d.Condition.Reason != v1.ReasonVerificationTable {
					t.Errorf("condition %+v", d.Condition)
				}
			}},
		{rule: "a Job stopped at its deadline without a result: VerificationTimedOut",
			o: Observation{Cluster: cluster(daily), Backups: twoBackups, Jobs: []Job{job("b2-verify-dd", "b2", jobDeadline)}},
			check: func(t *testing.T, d Decision) {
				if r := d.Record[0]; r.Status.Reason != v1.ReasonVerificationTimedOut || !strings.Contains(r.Message, "7200s") {
					t.Errorf("outcome %+v: %s", r.Status, r.Message)
				}
			}},
		{rule: "a Job stopped at its deadline that wrote a result as it was stopped: still VerificationTimedOut",
			o: Observation{Cluster: cluster(daily), Backups: twoBackups, Jobs: []Job{func() Job {
				j := job("b2-verify-ff", "b2", jobDeadline)
				j.Message = result(backupjob.VerifyResult{Reason: v1.ReasonVerificationFailed, Message: "context canceled"})
				return j
			}()}},
			check: func(t *testing.T, d Decision) {
				if r := d.Record[0]; r.Status.Reason != v1.ReasonVerificationTimedOut {
					t.Errorf("outcome %+v: %s", r.Status, r.Message)
				}
			}},
		{rule: "a Job that failed without a result (evicted, out of memory): VerificationJobFailed, not the backup's fault",
			o: Observation{Cluster: cluster(daily), Backups: twoBackups, Jobs: []Job{job("b2-verify-ee", "b2", jobFailed)}},
			check: func(t *testing.T, d Decision) {
				if r := d.Record[0]; r.Status.Reason != v1.ReasonVerificationJobFailed || !strings.Contains(r.Message, "not found faulty") {
					t.Errorf("outcome %+v: %s", r.Status, r.Message)
				}
			}},
		{rule: "the archive is replayed when the Cluster holds its location, archives, and the backup is there", started: "b2",
			o: Observation{Cluster: cluster(daily), Backups: twoBackups},
			check: func(t *testing.T, d Decision) {
				if d.Start.Archive != "db" {
					t.Errorf("archive %q, want db", d.Start.Archive)
				}
			}},
		{rule: "no archive is replayed when the Cluster does not archive", started: "b2",
			o: Observation{Cluster: func() *v1.Cluster { c := cluster(daily); c.Status.BinlogArchive = nil; return c }(), Backups: twoBackups},
			check: func(t *testing.T, d Decision) {
				if d.Start.Archive != "" {
					t.Errorf("archive %q, want none", d.Start.Archive)
				}
			}},
		{rule: "no archive is replayed for a backup written to another location", started: "b2",
			o: Observation{Cluster: cluster(daily), Backups: []v1.Backup{func() v1.Backup {
				b := completed("b2", t0.Add(-time.Hour))
				b.Status.DestinationPath = "old-prefix/db/b2/x/"
				return b
			}()}},
			check: func(t *testing.T, d Decision) {
				if d.Start.Archive != "" {
					t.Errorf("archive %q, want none", d.Start.Archive)
				}
			}},
		{rule: "a slot verified is not due again when the Job controller's clock set its start before the slot",
			o: Observation{Cluster: withLast(cluster(daily), func() *v1.LastVerifiedBackup {
				l := lastAt(time.Date(2026, 3, 10, 2, 59, 58, 0, time.UTC), t0.Add(-10*time.Hour))
				l.Due = mt(time.Date(2026, 3, 10, 3, 0, 0, 0, time.UTC))
				return l
			}()), Backups: twoBackups}},
		{rule: "a schedule that does not parse leaves everyBackups working", started: "b2",
			o: Observation{Cluster: cluster(&v1.BackupVerification{Schedule: "0 0 25 * * *", EveryBackups: every(1)}), Backups: twoBackups},
			check: func(t *testing.T, d Decision) {
				if d.Condition.Reason != ReasonInvalidSchedule {
					t.Errorf("condition %+v", d.Condition)
				}
			}},
		{rule: "a failed result whose reason is not a word is recorded as VerificationFailed",
			o: Observation{Cluster: cluster(daily), Backups: twoBackups, Jobs: []Job{func() Job {
				j := job("b2-verify-gg", "b2", jobFailed)
				j.Message = `{"passed":false}`
				return j
			}()}},
			check: func(t *testing.T, d Decision) {
				if r := d.Record[0]; r.Status.Reason != v1.ReasonVerificationFailed {
					t.Errorf("outcome %+v", r.Status)
				}
			}},
		{rule: "a Job that did not run to its end leaves the Cluster's condition Unknown, not False",
			o: Observation{Cluster: cluster(daily), Backups: twoBackups, Jobs: []Job{job("b2-verify-hh", "b2", jobFailed)}},
			check: func(t *testing.T, d Decision) {
				if d.Condition.Status != metav1.ConditionUnknown || d.Condition.Reason != v1.ReasonVerificationJobFailed {
					t.Errorf("condition %+v", d.Condition)
				}
			}},
		{rule: "the Job's due instant is carried to the Cluster's last verification",
			o: Observation{Cluster: cluster(daily), Backups: twoBackups, Jobs: []Job{func() Job {
				j := passed
				j.Job = passed.Job.DeepCopy()
				j.Job.Annotations = map[string]string{v1.VerificationDueAnnotation: "2026-03-10T03:00:00Z"}
				return j
			}()}},
			check: func(t *testing.T, d Decision) {
				if l := lastVerified(cluster(daily), d.Record); l.Due == nil || !l.Due.Time.Equal(time.Date(2026, 3, 10, 3, 0, 0, 0, time.UTC)) {
					t.Errorf("last %+v", l)
				}
			}},
		{rule: "a schedule that does not parse: the condition says so and nothing starts",
			o: Observation{Cluster: cluster(&v1.BackupVerification{Schedule: "0 0 25 * * *"}), Backups: twoBackups},
			check: func(t *testing.T, d Decision) {
				if d.Condition.Reason != ReasonInvalidSchedule {
					t.Errorf("condition %+v", d.Condition)
				}
			}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			tc.o.Now = t0
			d := Decide(tc.o)
			switch {
			case tc.started == "" && d.Start != nil:
				t.Fatalf("started a verification of %s (%s)", d.Start.Backup.Name, d.Start.Why)
			case tc.started != "" && (d.Start == nil || d.Start.Backup.Name != tc.started):
				t.Fatalf("start %+v, want a verification of %s", d.Start, tc.started)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
			if again := Decide(tc.o); (again.Start == nil) != (d.Start == nil) || (d.Start != nil && again.Start.JobName != d.Start.JobName) {
				t.Errorf("the same observation decided again names another Job")
			}
		})
	}
}

// TestLastOf: the Cluster's last verification keeps when one last passed, through a failure.
func TestLastOf(t *testing.T) {
	pass := Outcome{Job: job("j1", "b1").Job, Backup: "b1", Status: v1.BackupVerificationStatus{Passed: true, CompletedAt: mt(t0)}}
	fail := Outcome{Job: job("j2", "b2").Job, Backup: "b2", Status: v1.BackupVerificationStatus{Reason: "TableCheckFailed", CompletedAt: mt(t0.Add(time.Hour))}}
	l := LastOf(fail, LastOf(pass, nil))
	if l.Passed || l.Name != "b2" || l.LastPassedAt == nil || !l.LastPassedAt.Time.Equal(t0) {
		t.Errorf("last %+v", l)
	}
}

// TestBackupCondition: the Backup's Verified condition for each kind of outcome.
func TestBackupCondition(t *testing.T) {
	verified := &metav1.Condition{Type: v1.BackupVerified, Status: metav1.ConditionTrue, Reason: v1.ReasonVerificationPassed}
	for _, tc := range []struct {
		rule    string
		o       Outcome
		current *metav1.Condition
		status  metav1.ConditionStatus
		keep    bool
	}{
		{"a pass is True", Outcome{Status: v1.BackupVerificationStatus{Passed: true, Reason: v1.ReasonVerificationPassed}}, nil, metav1.ConditionTrue, false},
		{"a damaged backup is False, even after an earlier pass", Outcome{Status: v1.BackupVerificationStatus{Reason: v1.ReasonVerificationTable}}, verified, metav1.ConditionFalse, false},
		{"a Job that did not run to its end is Unknown on a backup never verified", Outcome{Status: v1.BackupVerificationStatus{Reason: v1.ReasonVerificationJobFailed}}, nil, metav1.ConditionUnknown, false},
		{"a Job that did not run to its end keeps an earlier pass", Outcome{Status: v1.BackupVerificationStatus{Reason: v1.ReasonVerificationJobFailed}}, verified, "", true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			cond, keep := BackupCondition(tc.o, tc.current)
			if keep != tc.keep || (!keep && cond.Status != tc.status) {
				t.Errorf("got %s keep=%v, want %s keep=%v", cond.Status, keep, tc.status, tc.keep)
			}
		})
	}
}
