package protection

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

var (
	created = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day     = 24 * time.Hour
)

func cluster(mutate ...func(*v1.Cluster)) *v1.Cluster {
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", CreationTimestamp: metav1.NewTime(created)},
		Spec: v1.ClusterSpec{Backup: &v1.BackupConfiguration{ObjectStore: &v1.ObjectStoreConfiguration{Bucket: "b"}}}}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func at(d time.Duration) *metav1.Time { t := metav1.NewTime(created.Add(d)); return &t }

func completed(name string, done time.Duration) v1.Backup {
	return v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.BackupStatus{Phase: v1.BackupPhaseCompleted, CompletedAt: at(done), Size: 100, GTIDExecuted: "u:1-5"}}
}

func failed(name string, done time.Duration, why string) v1.Backup {
	return v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.BackupStatus{Phase: v1.BackupPhaseFailed, CompletedAt: at(done), Error: why}}
}

func suspended(name string) v1.ScheduledBackup {
	yes := true
	return v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.ScheduledBackupSpec{Suspend: &yes},
		Status: v1.ScheduledBackupStatus{NextScheduleTime: at(3 * day)}}
}

func running(name string, next time.Duration) v1.ScheduledBackup {
	return v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.ScheduledBackupStatus{NextScheduleTime: at(next)}}
}

// withCondition is a Cluster whose BackupsHealthy was reason, its last failed Backup lastFailed.
func withCondition(status metav1.ConditionStatus, reason, lastFailed string) func(*v1.Cluster) {
	return func(c *v1.Cluster) {
		c.Status.Conditions = []metav1.Condition{{Type: v1.ConditionBackupsHealthy, Status: status, Reason: reason}}
		if lastFailed != "" {
			c.Status.Backups = &v1.BackupsStatus{LastFailed: &v1.FailedBackupRecord{Name: lastFailed}}
		}
	}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		rule      string
		o         Observation
		status    metav1.ConditionStatus
		reason    string
		message   string
		event     string
		success   string
		lastFail  string
		requeueLE time.Duration
	}{
		{rule: "no Backup finished yet, within failureAlertAfter: Unknown, the critical time named",
			o:      Observation{Now: created.Add(time.Hour)},
			status: metav1.ConditionUnknown, reason: ReasonNoBackupYet, message: "NoSuccessfulBackup at 2026-11-02T02:00:00Z",
			requeueLE: refreshEvery},
		{rule: "the last Backup completed: True",
			o:      Observation{Now: created.Add(2 * day), Backups: []v1.Backup{failed("f1", day, "x"), completed("ok", day+time.Hour)}},
			status: metav1.ConditionTrue, reason: ReasonSucceeded, success: "ok", lastFail: "f1"},
		{rule: "the last Backup failed: False LastBackupFailed with a Warning naming it and its error",
			o:      Observation{Now: created.Add(day + 2*time.Hour), Backups: []v1.Backup{completed("ok", day), failed("f2", day+time.Hour, "clone: connection refused")}},
			status: metav1.ConditionFalse, reason: ReasonFailed, message: "clone: connection refused", event: ReasonFailed,
			success: "ok", lastFail: "f2"},
		{rule: "a second failed Backup while already LastBackupFailed: a Warning for it too",
			o: Observation{Now: created.Add(day + 3*time.Hour), Cluster: cluster(withCondition(metav1.ConditionFalse, ReasonFailed, "f2")),
				Backups: []v1.Backup{completed("ok", day), failed("f2", day+time.Hour, "a"), failed("f3", day+2*time.Hour, "b")}},
			status: metav1.ConditionFalse, reason: ReasonFailed, event: ReasonFailed, lastFail: "f3", success: "ok"},
		{rule: "the same failed Backup looked at again: no second Warning",
			o: Observation{Now: created.Add(day + 3*time.Hour), Cluster: cluster(withCondition(metav1.ConditionFalse, ReasonFailed, "f2")),
				Backups: []v1.Backup{completed("ok", day), failed("f2", day+time.Hour, "a")}},
			status: metav1.ConditionFalse, reason: ReasonFailed, lastFail: "f2", success: "ok"},
		{rule: "no success for failureAlertAfter since the last one: critical NoSuccessfulBackup, with the last failure as cause",
			o:      Observation{Now: created.Add(day + 26*time.Hour), Backups: []v1.Backup{completed("ok", day), failed("f2", day+time.Hour, "store refused")}},
			status: metav1.ConditionFalse, reason: ReasonNoSuccess, message: "the last Backup, f2, failed: store refused", event: ReasonNoSuccess},
		{rule: "no success since the Cluster's creation, no schedule at all: critical, saying so",
			o:      Observation{Now: created.Add(26 * time.Hour)},
			status: metav1.ConditionFalse, reason: ReasonNoSuccess, message: "no ScheduledBackup backs this Cluster up", event: ReasonNoSuccess},
		{rule: "every schedule suspended: critical, saying so",
			o:      Observation{Now: created.Add(27 * time.Hour), Schedules: []v1.ScheduledBackup{suspended("nightly")}},
			status: metav1.ConditionFalse, reason: ReasonNoSuccess, message: "every ScheduledBackup of this Cluster is suspended", event: ReasonNoSuccess},
		{rule: "a schedule that never produced a finished Backup (stuck): critical",
			o:      Observation{Now: created.Add(27 * time.Hour), Schedules: []v1.ScheduledBackup{running("nightly", 28*time.Hour)}},
			status: metav1.ConditionFalse, reason: ReasonNoSuccess, message: "stuck pending or running", event: ReasonNoSuccess},
		{rule: "a shorter failureAlertAfter (1m) is honoured",
			o: Observation{Now: created.Add(2 * time.Minute), Cluster: cluster(func(c *v1.Cluster) {
				c.Spec.Backup.FailureAlertAfter = &metav1.Duration{Duration: time.Minute}
			})},
			status: metav1.ConditionFalse, reason: ReasonNoSuccess, event: ReasonNoSuccess},
		{rule: "already critical: no second Warning",
			o:      Observation{Now: created.Add(28 * time.Hour), Cluster: cluster(withCondition(metav1.ConditionFalse, ReasonNoSuccess, ""))},
			status: metav1.ConditionFalse, reason: ReasonNoSuccess},
		{rule: "healed: a success after the critical level turns it True with a Normal Event",
			o: Observation{Now: created.Add(30 * time.Hour), Cluster: cluster(withCondition(metav1.ConditionFalse, ReasonNoSuccess, "")),
				Backups: []v1.Backup{completed("back", 29*time.Hour)}},
			status: metav1.ConditionTrue, reason: ReasonSucceeded, event: "BackupsHealthy", success: "back"},
		{rule: "the last success's Backup object was pruned (history limit 0): the recorded success stands, no false critical",
			o: Observation{Now: created.Add(2 * day), Cluster: cluster(func(c *v1.Cluster) {
				c.Status.Backups = &v1.BackupsStatus{LastSuccessful: &v1.SuccessfulBackupRecord{Name: "pruned", CompletedAt: at(2*day - time.Hour)}}
			}), Backups: []v1.Backup{completed("older", day)}},
			status: metav1.ConditionTrue, reason: ReasonSucceeded, success: "pruned"},
		{rule: "the last failure's Backup object was pruned: still LastBackupFailed, no second Warning",
			o: Observation{Now: created.Add(2 * day), Cluster: cluster(withCondition(metav1.ConditionFalse, ReasonFailed, "gone"), func(c *v1.Cluster) {
				c.Status.Backups.LastFailed.At, c.Status.Backups.LastFailed.Reason = at(2*day-time.Hour), "503"
			}), Backups: []v1.Backup{completed("ok", day)}},
			status: metav1.ConditionFalse, reason: ReasonFailed, lastFail: "gone", success: "ok"},
		{rule: "the critical level falls due before the next refresh: looked at again then",
			o:      Observation{Now: created.Add(26*time.Hour - time.Minute)},
			status: metav1.ConditionUnknown, reason: ReasonNoBackupYet, requeueLE: time.Minute + time.Second},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			o := tc.o
			if o.Cluster == nil {
				o.Cluster = cluster()
			}
			d := Decide(o)
			c := d.Condition
			if c == nil || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
				t.Fatalf("condition %+v, want %s %s containing %q", c, tc.status, tc.reason, tc.message)
			}
			var events []string
			for _, e := range d.Events {
				events = append(events, e.Kind.Reason)
			}
			if (tc.event == "" && len(events) != 0) || (tc.event != "" && (len(events) != 1 || events[0] != tc.event)) {
				t.Errorf("events %v, want %q", events, tc.event)
			}
			st := d.Status
			if tc.success != "" && (st.LastSuccessful == nil || st.LastSuccessful.Name != tc.success) {
				t.Errorf("last successful %+v, want %s", st.LastSuccessful, tc.success)
			}
			if tc.lastFail != "" && (st.LastFailed == nil || st.LastFailed.Name != tc.lastFail) {
				t.Errorf("last failed %+v, want %s", st.LastFailed, tc.lastFail)
			}
			if tc.requeueLE != 0 && d.RequeueAfter > tc.requeueLE {
				t.Errorf("requeue after %s, want at most %s", d.RequeueAfter, tc.requeueLE)
			}
		})
	}
}

func TestDecideStatusFigures(t *testing.T) {
	from := metav1.NewMicroTime(created.Add(36 * time.Hour))
	c := cluster(func(c *v1.Cluster) { c.Status.BinlogArchive = &v1.BinlogArchiveStatus{RecoverableFrom: &from} })
	expired := completed("old", 12*time.Hour)
	expired.Status.Conditions = []metav1.Condition{{Type: v1.BackupArtifactsAvailable, Status: metav1.ConditionFalse}}
	o := Observation{Now: created.Add(2 * day), Cluster: c,
		Backups:   []v1.Backup{expired, completed("b1", day), completed("b2", 36*time.Hour)},
		Schedules: []v1.ScheduledBackup{running("hourly", 49*time.Hour), running("daily", 3*day), suspended("paused")},
		Listing:   Listing{Complete: 2, Bytes: 300, At: created.Add(2 * day)}}
	st := Decide(o).Status
	if st.Restorable != 2 || st.RestorableBytes != 300 || st.ListedAt == nil {
		t.Errorf("restorable %d (%d bytes) listed %v, want the listing's 2 (300)", st.Restorable, st.RestorableBytes, st.ListedAt)
	}
	if st.FirstRecoverablePoint == nil || !st.FirstRecoverablePoint.Equal(at(36*time.Hour)) {
		t.Errorf("first recoverable point %v, want the archive's window start", st.FirstRecoverablePoint)
	}
	if st.NextScheduled == nil || !st.NextScheduled.Equal(at(49*time.Hour)) {
		t.Errorf("next scheduled %v, want the earliest schedule not suspended", st.NextScheduled)
	}
	if st.CriticalAt == nil || !st.CriticalAt.Equal(at(36*time.Hour+26*time.Hour)) {
		t.Errorf("critical at %v, want the last success plus 26h", st.CriticalAt)
	}
	o.Cluster = cluster()
	o.Listing = Listing{Err: errString("not held")}
	o.Cluster.Status.Backups = &v1.BackupsStatus{Restorable: 7, RestorableBytes: 70, ListedAt: at(day)}
	st = Decide(o).Status
	if st.Restorable != 7 || st.FirstRecoverablePoint == nil || !st.FirstRecoverablePoint.Equal(at(day)) {
		t.Errorf("without a listing the last figures stay (%d), and without an archive the oldest available backup's end is the first point: %v",
			st.Restorable, st.FirstRecoverablePoint)
	}
	if d := Decide(Observation{Now: created, Cluster: cluster(func(c *v1.Cluster) { c.Spec.Backup = nil })}); d.Status != nil || d.Condition != nil {
		t.Errorf("a Cluster without an object store: %+v", d)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
