package retention

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	retentionpolicy "github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
)

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// eligibleCluster is a Cluster eligible for retention (policy 7d, an object store, a primary),
// changed by mutate.
func eligibleCluster(mutate func(*v1.Cluster)) *v1.Cluster {
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "uid-db"},
		Spec: v1.ClusterSpec{Backup: &v1.BackupConfiguration{RetentionPolicy: "7d",
			ObjectStore: &v1.ObjectStoreConfiguration{Bucket: "bucket"}}},
		Status: v1.ClusterStatus{CurrentPrimary: "db-1"}}
	c.Status.ObjectStoreLocation = &v1.ObjectStoreLocationStatus{Location: c.ObjectStoreLocation(),
		Phase: v1.LocationClaimed, HolderUID: "uid-db"}
	if mutate != nil {
		mutate(c)
	}
	return c
}

func stampedAt(t time.Time) func(*v1.Cluster) {
	return func(c *v1.Cluster) { c.Status.LastRetentionRunTime = &metav1.Time{Time: t} }
}

// testBackup is a Backup of cluster in phase, with a backup id when id is not empty.
func testBackup(name, cluster string, phase v1.BackupPhase, id string, timeout time.Duration) v1.Backup {
	b := v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:   v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: cluster}},
		Status: v1.BackupStatus{Phase: phase, BackupID: id}}
	if timeout > 0 {
		b.Spec.Timeout = &metav1.Duration{Duration: timeout}
	}
	return b
}

func reasons(events []kit.Event) string {
	var out []string
	for _, e := range events {
		out = append(out, e.Kind.Reason)
	}
	return strings.Join(out, ",")
}

func ptrInt32(n int32) *int32 { return &n }

func TestDecide(t *testing.T) {
	deleting := metav1.NewTime(testNow)
	cases := []struct {
		name      string
		cluster   *v1.Cluster
		policyErr error
		skip      string
		due       bool
		requeue   time.Duration
		event     string
		completed time.Time // the newest completed Backup's completion
	}{
		{name: "no policy: no pass", cluster: eligibleCluster(func(c *v1.Cluster) { c.Spec.Backup.RetentionPolicy = "" }),
			skip: skipNoPolicy},
		{name: "no backup section: no pass", cluster: eligibleCluster(func(c *v1.Cluster) { c.Spec.Backup = nil }),
			skip: skipNoPolicy},
		{name: "a policy without an object store: no pass", cluster: eligibleCluster(func(c *v1.Cluster) { c.Spec.Backup.ObjectStore = nil }),
			skip: skipNoObjectStore},
		{name: "no established primary (currentPrimary empty): no pass", cluster: eligibleCluster(func(c *v1.Cluster) { c.Status.CurrentPrimary = "" }),
			skip: skipNoPrimary},
		{name: "the location held by another incarnation: no pass", cluster: eligibleCluster(func(c *v1.Cluster) {
			c.Status.ObjectStoreLocation.Phase, c.Status.ObjectStoreLocation.HolderUID = v1.LocationInUse, "uid-old"
		}), skip: skipNotHeld},
		{name: "the location not claimed yet: no pass", cluster: eligibleCluster(func(c *v1.Cluster) { c.Status.ObjectStoreLocation = nil }),
			skip: skipNotHeld},
		{name: "a claim recorded for the location before the path changed: no pass", cluster: eligibleCluster(func(c *v1.Cluster) {
			c.Spec.Backup.ObjectStore.Path = "moved"
		}), skip: skipNotHeld},
		{name: "a primary being switched over is still established", cluster: eligibleCluster(func(c *v1.Cluster) { c.Status.TargetPrimary = "db-2" }),
			due: true},
		{name: "the Cluster is being deleted: no pass", cluster: eligibleCluster(func(c *v1.Cluster) {
			c.DeletionTimestamp = &deleting
		}), skip: skipDeleting},
		{name: "an invalid policy: no pass and a Warning", cluster: eligibleCluster(nil), policyErr: errors.New("retentionPolicy: bad"),
			skip: skipInvalid, event: "InvalidRetentionPolicy"},
		{name: "a count policy alone is a policy", cluster: eligibleCluster(func(c *v1.Cluster) {
			c.Spec.Backup.RetentionPolicy, c.Spec.Backup.RetentionCount = "", ptrInt32(3)
		}), due: true},
		{name: "never ran: due now", cluster: eligibleCluster(nil), due: true},
		{name: "a backup completed since the last pass: due at once, before the hour", completed: testNow.Add(-10 * time.Minute),
			cluster: eligibleCluster(stampedAt(testNow.Add(-30 * time.Minute))), due: true},
		{name: "a backup completed in the second of the last pass: due (the pass may have listed before it)", completed: testNow.Add(-30 * time.Minute),
			cluster: eligibleCluster(stampedAt(testNow.Add(-30 * time.Minute))), due: true},
		{name: "the newest backup completed before the last pass: the hourly wait", completed: testNow.Add(-40 * time.Minute),
			cluster: eligibleCluster(stampedAt(testNow.Add(-30 * time.Minute))), requeue: 30 * time.Minute},
		{name: "ran 30 minutes ago: the next pass in 30 minutes", cluster: eligibleCluster(stampedAt(testNow.Add(-30 * time.Minute))),
			requeue: 30 * time.Minute},
		{name: "ran exactly an hour ago: due", cluster: eligibleCluster(stampedAt(testNow.Add(-time.Hour))), due: true},
		{name: "ran two hours ago: due", cluster: eligibleCluster(stampedAt(testNow.Add(-2 * time.Hour))), due: true},
		{name: "a stamp 10 minutes ahead (skew): an hour after it", cluster: eligibleCluster(stampedAt(testNow.Add(10 * time.Minute))),
			requeue: 70 * time.Minute},
		{name: "a stamp more than an hour ahead (clock went back): disregarded", cluster: eligibleCluster(stampedAt(testNow.Add(2 * time.Hour))),
			due: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := retentionpolicy.PolicyFromSpec(tc.cluster.Spec.Backup)
			if err != nil {
				t.Fatal(err)
			}
			if tc.policyErr != nil {
				err = tc.policyErr
			}
			s := Decide(Observation{Now: testNow, Cluster: tc.cluster, Policy: p, PolicyErr: err, LastCompleted: tc.completed})
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

func TestDecideOutcome(t *testing.T) {
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
			events: "ForeignBackups", message: "(of namespace(s) team-b), or by another incarnation",
			report: retentionpass.Report{Foreign: []objectstore.BackupRef{{Cluster: "db", Name: "z", ID: "7"}}, ForeignNamespaces: []string{"team-b"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := DecideOutcome("window 7d", tc.report, tc.err, tc.fails)
			if out.Stamp != tc.stamp || out.RequeueAfter != tc.requeue || reasons(out.Events) != tc.events {
				t.Errorf("got stamp %v requeue %v events %q", out.Stamp, out.RequeueAfter, reasons(out.Events))
			}
			if tc.message != "" && (len(out.Events) == 0 || !strings.Contains(out.Events[0].Message, tc.message)) {
				t.Errorf("events %+v, want a message with %q", out.Events, tc.message)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	for failures, want := range map[int]time.Duration{
		1: time.Minute, 2: 2 * time.Minute, 3: 4 * time.Minute, 6: 32 * time.Minute, 7: time.Hour, 100: time.Hour,
	} {
		if got := backoff(failures); got != want {
			t.Errorf("after %d failures: %v, want %v", failures, got, want)
		}
	}
}
