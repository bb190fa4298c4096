package controller

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
)

var retNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// retCluster is a Cluster eligible for retention (policy 7d, an object store, a primary),
// changed by mutate.
func retCluster(mutate func(*v1.Cluster)) *v1.Cluster {
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
		Spec: v1.ClusterSpec{Backup: &v1.BackupConfiguration{RetentionPolicy: "7d",
			ObjectStore: &v1.ObjectStoreConfiguration{Bucket: "bucket"}}},
		Status: v1.ClusterStatus{CurrentPrimary: "db-1"}}
	if mutate != nil {
		mutate(c)
	}
	return c
}

func stampedAt(t time.Time) func(*v1.Cluster) {
	return func(c *v1.Cluster) { c.Status.LastRetentionRunTime = &metav1.Time{Time: t} }
}

func TestDecideRetentionSchedule(t *testing.T) {
	deleting := metav1.NewTime(retNow)
	cases := []struct {
		name      string
		cluster   *v1.Cluster
		policyErr error
		skip      string
		due       bool
		requeue   time.Duration
		event     string
	}{
		{name: "no policy: no pass", cluster: retCluster(func(c *v1.Cluster) { c.Spec.Backup.RetentionPolicy = "" }),
			skip: retentionSkipNoPolicy},
		{name: "no backup section: no pass", cluster: retCluster(func(c *v1.Cluster) { c.Spec.Backup = nil }),
			skip: retentionSkipNoPolicy},
		{name: "a policy without an object store: no pass", cluster: retCluster(func(c *v1.Cluster) { c.Spec.Backup.ObjectStore = nil }),
			skip: retentionSkipNoObjectStore},
		{name: "no established primary (currentPrimary empty): no pass", cluster: retCluster(func(c *v1.Cluster) { c.Status.CurrentPrimary = "" }),
			skip: retentionSkipNoPrimary},
		{name: "a primary being switched over is still established", cluster: retCluster(func(c *v1.Cluster) { c.Status.TargetPrimary = "db-2" }),
			due: true},
		{name: "the Cluster is being deleted: no pass", cluster: retCluster(func(c *v1.Cluster) {
			c.DeletionTimestamp = &deleting
		}), skip: retentionSkipDeleting},
		{name: "an invalid policy: no pass and a Warning", cluster: retCluster(nil), policyErr: errors.New("retentionPolicy: bad"),
			skip: retentionSkipInvalid, event: "InvalidRetentionPolicy"},
		{name: "a count policy alone is a policy", cluster: retCluster(func(c *v1.Cluster) {
			c.Spec.Backup.RetentionPolicy, c.Spec.Backup.RetentionCount = "", ptrInt32(3)
		}), due: true},
		{name: "never ran: due now", cluster: retCluster(nil), due: true},
		{name: "ran 30 minutes ago: the next pass in 30 minutes", cluster: retCluster(stampedAt(retNow.Add(-30 * time.Minute))),
			requeue: 30 * time.Minute},
		{name: "ran exactly an hour ago: due", cluster: retCluster(stampedAt(retNow.Add(-time.Hour))), due: true},
		{name: "ran two hours ago: due", cluster: retCluster(stampedAt(retNow.Add(-2 * time.Hour))), due: true},
		{name: "a stamp 10 minutes ahead (skew): an hour after it", cluster: retCluster(stampedAt(retNow.Add(10 * time.Minute))),
			requeue: 70 * time.Minute},
		{name: "a stamp more than an hour ahead (clock went back): disregarded", cluster: retCluster(stampedAt(retNow.Add(2 * time.Hour))),
			due: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := retention.PolicyFromSpec(tc.cluster.Spec.Backup)
			if err != nil {
				t.Fatal(err)
			}
			if tc.policyErr != nil {
				err = tc.policyErr
			}
			s := decideRetentionSchedule(retentionObservation{Now: retNow, Cluster: tc.cluster, Policy: p, PolicyErr: err})
			if s.Skip != tc.skip || s.Due != tc.due || s.RequeueAfter != tc.requeue {
				t.Errorf("got skip %q due %v requeue %v, want skip %q due %v requeue %v",
					s.Skip, s.Due, s.RequeueAfter, tc.skip, tc.due, tc.requeue)
			}
			if got := reasons(s.Events); got != tc.event {
				t.Errorf("events %q, want %q", got, tc.event)
			}
		})
	}
}

func reasons(events []eventRecord) string {
	var out []string
	for _, e := range events {
		out = append(out, e.Kind.Reason)
	}
	return strings.Join(out, ",")
}

func ptrInt32(n int32) *int32 { return &n }

func TestRetentionBackoff(t *testing.T) {
	for failures, want := range map[int]time.Duration{
		1: time.Minute, 2: 2 * time.Minute, 3: 4 * time.Minute, 6: 32 * time.Minute, 7: time.Hour, 100: time.Hour,
	} {
		if got := retentionBackoff(failures); got != want {
			t.Errorf("after %d failures: %v, want %v", failures, got, want)
		}
	}
}

// retBackup is a Backup of cluster in phase, with a backup id when id is not empty.
func retBackup(name, cluster string, phase v1.BackupPhase, id string, timeout time.Duration) v1.Backup {
	b := v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:   v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: cluster}},
		Status: v1.BackupStatus{Phase: phase, BackupID: id}}
	if timeout > 0 {
		b.Spec.Timeout = &metav1.Duration{Duration: timeout}
	}
	return b
}

func TestRetentionIncompleteGrace(t *testing.T) {
	cases := []struct {
		name    string
		backups []v1.Backup
		want    time.Duration
	}{
		{"no Backups: 24 hours", nil, 24 * time.Hour},
		{"a running Backup with the default timeout (6h): 24 hours",
			[]v1.Backup{retBackup("a", "db", v1.BackupPhaseRunning, "1", 0)}, 24 * time.Hour},
		{"a running Backup with a 48h timeout: an hour past it",
			[]v1.Backup{retBackup("a", "db", v1.BackupPhaseRunning, "1", 48*time.Hour)}, 49 * time.Hour},
		{"a pending Backup counts too",
			[]v1.Backup{retBackup("a", "db", v1.BackupPhasePending, "", 30*time.Hour)}, 31 * time.Hour},
		{"a completed Backup with a long timeout does not count",
			[]v1.Backup{retBackup("a", "db", v1.BackupPhaseCompleted, "1", 48*time.Hour)}, 24 * time.Hour},
		{"another cluster's running Backup does not count",
			[]v1.Backup{retBackup("a", "other", v1.BackupPhaseRunning, "1", 48*time.Hour)}, 24 * time.Hour},
	}
	for _, tc := range cases {
		if got := incompleteGrace("db", tc.backups); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRetentionProtectedBackups(t *testing.T) {
	recovering := func(name, backup string) v1.Cluster {
		return v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: v1.ClusterSpec{
			Bootstrap: &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{Backup: v1.LocalObjectReference{Name: backup}}}}}
	}
	clusters := []v1.Cluster{*retCluster(nil), recovering("restored", "pinned"), recovering("lost", "gone"),
		recovering("other-restore", "theirs")}
	backups := []v1.Backup{
		retBackup("pinned", "db", v1.BackupPhaseCompleted, "20260101T000000Z", 0),
		retBackup("old", "db", v1.BackupPhaseCompleted, "20260102T000000Z", 0),
		retBackup("running", "db", v1.BackupPhaseRunning, "20260301T110000Z", 0),
		retBackup("new", "db", v1.BackupPhase(""), "", 0),
		retBackup("failed", "db", v1.BackupPhaseFailed, "20260201T000000Z", 0),
		retBackup("theirs", "other", v1.BackupPhaseCompleted, "20260101T000000Z", 0),
		retBackup("their-running", "other", v1.BackupPhaseRunning, "20260301T110000Z", 0),
	}
	p := protectedBackups("db", clusters, backups)
	ref := func(name, id string) objectstore.BackupRef {
		return objectstore.BackupRef{Cluster: "db", Name: name, ID: id}
	}
	cases := []struct {
		name string
		ref  objectstore.BackupRef
		want bool
	}{
		{"the backup a Cluster's bootstrap.recovery names is protected", ref("pinned", "20260101T000000Z"), true},
		{"another directory of that backup name is not (the recorded id decides)", ref("pinned", "20250101T000000Z"), false},
		{"a completed Backup nobody references is not protected", ref("old", "20260102T000000Z"), false},
		{"a running Backup's directory is protected", ref("running", "20260301T110000Z"), true},
		{"a Backup without a backupId yet protects every directory of its name", ref("new", "20260301T115959Z"), true},
		{"a recovery naming a Backup that is gone protects every directory of that name", ref("gone", "20250101T000000Z"), true},
		{"a failed Backup's directory is not protected", ref("failed", "20260201T000000Z"), false},
		{"another cluster's Backup named by a recovery does not protect this cluster's directories", ref("theirs", "20260101T000000Z"), false},
		{"another cluster's running Backup does not protect this cluster's directories", ref("their-running", "20260301T110000Z"), false},
	}
	for _, tc := range cases {
		if got := p.protects(tc.ref); got != tc.want {
			t.Errorf("%s: protects(%v) = %v, want %v", tc.name, tc.ref, got, tc.want)
		}
	}
}

func TestRetentionBackupsOfExpired(t *testing.T) {
	cfg := objectstore.Config{Endpoint: "s3.example:9000", Bucket: "bucket", Path: "ctl"}
	at := func(name, id, bucket, endpoint string, mutate func(*v1.Backup)) v1.Backup {
		b := retBackup(name, "db", v1.BackupPhaseCompleted, id, 0)
		ref := objectstore.BackupRef{Cluster: "db", Name: name, ID: id}
		b.Status.Bucket, b.Status.Endpoint, b.Status.DestinationPath = bucket, endpoint, objectstore.BackupDir("ctl", ref)
		if mutate != nil {
			mutate(&b)
		}
		return b
	}
	backups := []v1.Backup{
		at("old", "1", "bucket", "http://s3.example:9000", nil),
		at("old", "0", "bucket", "http://s3.example:9000", nil), // an earlier Backup object of the same name
		at("moved", "1", "elsewhere", "http://s3.example:9000", nil),
		at("marked", "1", "bucket", "http://s3.example:9000", func(b *v1.Backup) {
			b.Status.Conditions = []metav1.Condition{expiredCondition(b, "7d", metav1.NewTime(retNow))}
		}),
		at("kept", "1", "bucket", "http://s3.example:9000", nil),
	}
	expired := []objectstore.BackupRef{{Cluster: "db", Name: "old", ID: "1"}, {Cluster: "db", Name: "moved", ID: "1"},
		{Cluster: "db", Name: "marked", ID: "1"}}
	got := backupsOfExpired(expired, cfg, backups)
	if len(got) != 1 || got[0].Name != "old" || got[0].Status.BackupID != "1" {
		t.Fatalf("got %v, want only old/1: the Backup whose status names the expired directory in this store and is not yet marked", got)
	}
	c := expiredCondition(got[0], "window 7d", metav1.NewTime(retNow))
	if c.Type != v1.BackupArtifactsAvailable || c.Status != metav1.ConditionFalse || c.Reason != v1.ReasonArtifactsExpired {
		t.Errorf("condition %+v", c)
	}
}

func TestRetentionBackupsMissing(t *testing.T) {
	cfg := objectstore.Config{Endpoint: "s3.example:9000", Bucket: "bucket", Path: "ctl"}
	at := func(name string, mutate func(*v1.Backup)) v1.Backup {
		b := retBackup(name, "db", v1.BackupPhaseCompleted, "1", 0)
		ref := objectstore.BackupRef{Cluster: "db", Name: name, ID: "1"}
		b.Status.Bucket, b.Status.Endpoint, b.Status.DestinationPath = "bucket", "http://s3.example:9000", objectstore.BackupDir("ctl", ref)
		if mutate != nil {
			mutate(&b)
		}
		return b
	}
	backups := []v1.Backup{
		at("lost", nil),
		at("found", nil),
		at("deleted-now", nil),
		at("other-bucket", func(b *v1.Backup) { b.Status.Bucket = "elsewhere" }),
		at("other-endpoint", func(b *v1.Backup) { b.Status.Endpoint = "http://s3.other:9000" }),
		at("other-path", func(b *v1.Backup) {
			b.Status.DestinationPath = objectstore.BackupDir("old-path", objectstore.BackupRef{Cluster: "db", Name: "other-path", ID: "1"})
		}),
		at("other-cluster", func(b *v1.Backup) {
			b.Status.DestinationPath = objectstore.BackupDir("ctl", objectstore.BackupRef{Cluster: "db2", Name: "other-cluster", ID: "1"})
		}),
		at("running", func(b *v1.Backup) { b.Status.Phase = v1.BackupPhaseRunning }),
		at("failed", func(b *v1.Backup) { b.Status.Phase = v1.BackupPhaseFailed }),
		at("expired", func(b *v1.Backup) {
			b.Status.Conditions = []metav1.Condition{expiredCondition(b, "7d", metav1.NewTime(retNow))}
		}),
		at("missing", func(b *v1.Backup) {
			b.Status.Conditions = []metav1.Condition{missingCondition(b, metav1.NewTime(retNow))}
		}),
		at("garbled", func(b *v1.Backup) { b.Status.DestinationPath = "not a directory" }),
	}
	found := []objectstore.BackupRef{{Cluster: "db", Name: "found", ID: "1"}, {Cluster: "db", Name: "deleted-now", ID: "1"}}
	gone := []objectstore.BackupRef{{Cluster: "db", Name: "deleted-now", ID: "1"}}
	got := backupsMissing("db", found, gone, cfg, backups)
	if len(got) != 1 || got[0].Name != "lost" {
		t.Fatalf("got %v, want only lost: a completed, unmarked Backup recorded in this cluster's directory of this store, neither found nor deleted by the pass", got)
	}
	c := missingCondition(got[0], metav1.NewTime(retNow))
	if c.Type != v1.BackupArtifactsAvailable || c.Status != metav1.ConditionFalse || c.Reason != v1.ReasonArtifactsMissing {
		t.Errorf("condition %+v", c)
	}
}

func TestDecideRetentionOutcome(t *testing.T) {
	deleted := retentionpass.Report{Expired: []objectstore.BackupRef{{Cluster: "db", Name: "a", ID: "1"}},
		ExpiredBytes: 7000, Segments: 2, SegmentBytes: 300}
	cases := []struct {
		name    string
		report  retentionpass.Report
		err     error
		fails   int
		stamp   bool
		requeue time.Duration
		events  string
		message string
	}{
		{name: "a pass that deleted something is stamped and emits BackupRetention with counts and bytes",
			report: deleted, stamp: true, requeue: time.Hour, events: "BackupRetention",
			message: "1 expired base backup(s) (7000 bytes), 2 binlog segment(s) (300 bytes)"},
		{name: "a pass that deleted nothing is stamped without an Event", stamp: true, requeue: time.Hour},
		{name: "a failed pass is not stamped, warns and retries with backoff", err: errors.New("connection refused"),
			fails: 1, requeue: time.Minute, events: "RetentionFailed", message: "connection refused"},
		{name: "a pass failing again waits longer", err: errors.New("503"), fails: 3, requeue: 4 * time.Minute,
			events: "RetentionFailed"},
		{name: "a failed pass says what it deleted before failing", report: deleted, err: errors.New("503"), fails: 1,
			requeue: time.Minute, events: "RetentionFailed", message: "before failing it deleted 1 expired base backup(s)"},
		{name: "unreadable metadata warns", stamp: true, requeue: time.Hour, events: "UnreadableBackupMetadata",
			report: retentionpass.Report{Unreadable: []objectstore.BackupRef{{Cluster: "db", Name: "x", ID: "9"}}}, message: "x/9"},
		{name: "a backup without its archive warns", stamp: true, requeue: time.Hour, events: "UnrestorableBackups",
			report: retentionpass.Report{Unrestorable: []objectstore.BackupRef{{Cluster: "db", Name: "y", ID: "8"}}}, message: "y/8"},
		{name: "another namespace's backups warn that two Clusters share the location", stamp: true, requeue: time.Hour,
			events: "ForeignBackups", message: "namespace(s) team-b: two Clusters share",
			report: retentionpass.Report{Foreign: []objectstore.BackupRef{{Cluster: "db", Name: "z", ID: "7"}}, ForeignNamespaces: []string{"team-b"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := decideRetentionOutcome("window 7d", tc.report, tc.err, tc.fails)
			if out.Stamp != tc.stamp || out.RequeueAfter != tc.requeue || reasons(out.Events) != tc.events {
				t.Errorf("got stamp %v requeue %v events %q", out.Stamp, out.RequeueAfter, reasons(out.Events))
			}
			if tc.message != "" && (len(out.Events) == 0 || !strings.Contains(out.Events[0].Message, tc.message)) {
				t.Errorf("events %+v, want a message with %q", out.Events, tc.message)
			}
		})
	}
}

func TestRetentionDescribePolicy(t *testing.T) {
	size := resource.MustParse("10Gi")
	b := &v1.BackupConfiguration{RetentionPolicy: "30d", RetentionCount: ptrInt32(5), RetentionSize: &size}
	if got, want := describePolicy(b), "window 30d, count 5, size 10Gi"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := describePolicy(nil); got != "none" {
		t.Errorf("%q", got)
	}
}

func TestRetentionWakesOnlyOnCompletion(t *testing.T) {
	phases := []v1.BackupPhase{"", v1.BackupPhasePending, v1.BackupPhaseRunning, v1.BackupPhaseCompleted, v1.BackupPhaseFailed}
	for _, from := range phases {
		for _, to := range phases {
			o, n := retBackup("b", "db", from, "", 0), retBackup("b", "db", to, "", 0)
			want := to == v1.BackupPhaseCompleted && from != v1.BackupPhaseCompleted
			if got := backupJustCompleted(&o, &n); got != want {
				t.Errorf("%q -> %q: wakes %v, want %v", from, to, got, want)
			}
		}
	}
}

// TestClusterStatusKeepsLastRetentionRunTime: the Cluster controller's status is built from the
// one it read, so its writes never wipe the stamp of a retention pass.
func TestClusterStatusKeepsLastRetentionRunTime(t *testing.T) {
	stamp := metav1.NewTime(retNow.Add(-time.Minute))
	d := newClusterWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").
		status(func(s *v1.ClusterStatus) { s.LastRetentionRunTime = &stamp }).decide()
	if d.Status.LastRetentionRunTime == nil || !d.Status.LastRetentionRunTime.Equal(&stamp) {
		t.Errorf("lastRetentionRunTime %v, want %v", d.Status.LastRetentionRunTime, stamp)
	}
}
