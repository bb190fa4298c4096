package cluster

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

func TestDecideStatus(t *testing.T) {
	gtids := func(g map[string]string) func(*v1.ClusterStatus) {
		return func(s *v1.ClusterStatus) { s.GTIDExecutedByInstance = g }
	}
	rep := func(gtid string) *instanceclient.Status { return &instanceclient.Status{GTIDExecuted: gtid} }
	runCases(t, []ruleCase{
		{"instances and readyInstances count the Pods", newWorld(3).instance(1, true).instance(2, false).primary("db-1", "db-1"),
			func(t *testing.T, d Decision) {
				if d.Status.Instances != 2 || d.Status.ReadyInstances != 1 {
					t.Fatalf("%d/%d", d.Status.ReadyInstances, d.Status.Instances)
				}
			}},
		{"gtidExecutedByInstance: new reports replace, silent instances keep theirs, removed ones go",
			newWorld(2).instance(1, true).instance(2, true).primary("db-1", "db-1").
				status(gtids(map[string]string{"db-1": "a:1-3", "db-2": "a:1-2", "db-9": "a:1"})).
				reports(map[string]*instanceclient.Status{"db-1": rep("a:1-5")}, map[string]string{"db-2": "timeout"}),
			func(t *testing.T, d Decision) {
				g := d.Status.GTIDExecutedByInstance
				if len(g) != 2 || g["db-1"] != "a:1-5" || g["db-2"] != "a:1-2" {
					t.Fatalf("%v", g)
				}
			}},
		{"semi-sync state mirrors the current primary's report",
			newWorld(2).instance(1, true).instance(2, true).primary("db-1", "db-1").
				reports(map[string]*instanceclient.Status{"db-1": {SemiSync: &instanceclient.SemiSyncStatus{Active: false, WaitForReplicaCount: 1}},
					"db-2": {SemiSync: &instanceclient.SemiSyncStatus{Active: true}}}, nil),
			func(t *testing.T, d Decision) {
				s := d.Status.SemiSync
				if s == nil || s.Active || s.WaitForReplicaCount != 1 || !s.LastTransitionTime.Time.Equal(testNow) {
					t.Fatalf("%+v", s)
				}
			}},
		{"currentPrimaryTimestamp is stamped when a primary is first seen", newWorld(1).instance(1, true).primary("db-1", "db-1"),
			func(t *testing.T, d Decision) {
				if d.Status.CurrentPrimaryTimestamp == nil || !d.Status.CurrentPrimaryTimestamp.Time.Equal(testNow) {
					t.Fatalf("%v", d.Status.CurrentPrimaryTimestamp)
				}
			}},
		{"Ready when every instance is ready and the target is the current primary",
			newWorld(2).instance(1, true).instance(2, true).primary("db-1", "db-1"),
			func(t *testing.T, d Decision) {
				if condition(d, v1.ConditionReady).Status != metav1.ConditionTrue || condition(d, v1.ConditionProgressing).Status != metav1.ConditionFalse ||
					condition(d, v1.ConditionDegraded).Status != metav1.ConditionFalse || !slices.Contains(eventReasons(d), "ClusterReady") {
					t.Fatalf("%+v events %v", d.Status.Conditions, eventReasons(d))
				}
			}},
		{"not Ready and Progressing while the target primary has not reported",
			newWorld(1).instance(1, true).primary("", "db-1"),
			func(t *testing.T, d Decision) {
				if condition(d, v1.ConditionReady).Reason != reasonPrimaryPending || condition(d, v1.ConditionProgressing).Status != metav1.ConditionTrue {
					t.Fatalf("%+v", d.Status.Conditions)
				}
			}},
		{"Progressing while scaling", newWorld(2).instance(1, true).primary("db-1", "db-1"),
			func(t *testing.T, d Decision) {
				if c := condition(d, v1.ConditionProgressing); c.Status != metav1.ConditionTrue || c.Reason != reasonScaling {
					t.Fatalf("%+v", c)
				}
			}},
		{"Degraded when an instance does not answer", newWorld(2).instance(1, true).instance(2, true).primary("db-1", "db-1").
			reports(map[string]*instanceclient.Status{"db-1": {Role: v1.RolePrimary}}, map[string]string{"db-2": "timeout"}),
			func(t *testing.T, d Decision) {
				if c := condition(d, v1.ConditionDegraded); c.Status != metav1.ConditionTrue || c.Reason != reasonInstanceUnanswered ||
					!slices.Contains(eventReasons(d), "Degraded") {
					t.Fatalf("%+v", c)
				}
			}},
		{"Degraded while instances are diverged", newWorld(1).instance(1, true).primary("db-1", "db-1").
			status(func(s *v1.ClusterStatus) { s.DivergedInstances = []string{"db-1"} }),
			func(t *testing.T, d Decision) {
				if condition(d, v1.ConditionDegraded).Reason != reasonDivergedInstances {
					t.Fatalf("%+v", d.Status.Conditions)
				}
			}},
		{"Degraded while another incarnation holds the object store location", storeWorld().status(func(s *v1.ClusterStatus) {
			s.ObjectStoreLocation = &v1.ObjectStoreLocationStatus{Location: "s3://b/p/db/", Phase: v1.LocationInUse,
				Reason: "ObjectStoreInUse", Message: "the location belongs to Cluster ns/db (uid 1)"}
		}),
			func(t *testing.T, d Decision) {
				c := condition(d, v1.ConditionDegraded)
				if c.Status != metav1.ConditionTrue || c.Reason != reasonObjectStoreInUse || !strings.Contains(c.Message, "belongs to Cluster ns/db") ||
					!slices.Contains(eventReasons(d), "Degraded") {
					t.Fatalf("%+v events %v", c, eventReasons(d))
				}
			}},
		{"not Degraded by a refusal recorded for a location the Cluster no longer names", storeWorld().status(func(s *v1.ClusterStatus) {
			s.ObjectStoreLocation = &v1.ObjectStoreLocationStatus{Location: "s3://b/old/db/", Phase: v1.LocationInUse, Reason: "ObjectStoreInUse"}
		}),
			func(t *testing.T, d Decision) {
				if c := condition(d, v1.ConditionDegraded); c.Status != metav1.ConditionFalse {
					t.Fatalf("%+v", c)
				}
			}},
		{"Degraded while the archiver refuses a fork", storeWorld().status(func(s *v1.ClusterStatus) {
			s.Conditions = append(s.Conditions, metav1.Condition{Type: "BinlogArchiving", Status: metav1.ConditionFalse,
				Reason: "ArchiveFork", Message: "db-1: the archive holds transactions this server never executed"})
		}),
			func(t *testing.T, d Decision) {
				if c := condition(d, v1.ConditionDegraded); c.Status != metav1.ConditionTrue || c.Reason != "ArchiveFork" {
					t.Fatalf("%+v", c)
				}
			}},
	})
}

// storeWorld is a ready one-instance Cluster backing up to bucket b under path p.
func storeWorld() *world {
	return newWorld(1).instance(1, true).primary("db-1", "db-1").spec(func(s *v1.ClusterSpec) {
		s.Backup = &v1.BackupConfiguration{ObjectStore: &v1.ObjectStoreConfiguration{Bucket: "b", Path: "p"}}
	})
}

func TestDecideIsStable(t *testing.T) {
	w := newWorld(2).primary("db-1", "db-1").instance(1, true).instance(2, true)
	first := w.decide()
	w.o.Cluster.Status = first.Status
	w.o.Now = w.o.Now.Add(time.Minute)
	second := w.decide()
	if statusChanged(first.Status, second.Status) {
		t.Errorf("a converged Cluster needs no status write:\n%+v\n%+v", first.Status, second.Status)
	}
	if len(eventReasons(second)) != 0 {
		t.Errorf("no Events without a transition: %v", eventReasons(second))
	}
}

func TestCurrentPrimaryTimestamp(t *testing.T) {
	at := func(m int) *metav1.Time {
		tm := metav1.NewTime(testNow.Add(time.Duration(m) * time.Minute))
		return &tm
	}
	// The Pods are labelled with db-1 as primary.
	labelled := func() *world {
		return newWorld(2).primary("db-1", "db-1").instance(1, true).instance(2, true)
	}
	for _, tc := range []struct {
		rule  string
		world *world
		want  *metav1.Time
	}{
		{"stamped when a primary is first seen", labelled(), at(0)},
		{"kept while the primary stays", labelled().status(func(s *v1.ClusterStatus) { s.CurrentPrimaryTimestamp = at(-60) }), at(-60)},
		{"restamped when a switchover's primary reports and the timestamp is the old one's",
			labelled().status(func(s *v1.ClusterStatus) {
				s.CurrentPrimary, s.TargetPrimary, s.CurrentPrimaryTimestamp, s.TargetPrimaryTimestamp = "db-2", "db-2", at(-60), at(-1)
			}), at(0)},
		{"kept when the promoted instance stamped it itself",
			labelled().status(func(s *v1.ClusterStatus) {
				s.CurrentPrimary, s.TargetPrimary, s.CurrentPrimaryTimestamp, s.TargetPrimaryTimestamp = "db-2", "db-2", at(-1), at(-2)
			}), at(-1)},
	} {
		got := tc.world.decide().Status.CurrentPrimaryTimestamp
		if got == nil || !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.rule, got, tc.want)
		}
	}
}

// TestClusterStatusKeepsLastRetentionRunTime: the Cluster controller's status is built from the
// one it read, so its writes never wipe the stamp of a retention pass.
func TestClusterStatusKeepsLastRetentionRunTime(t *testing.T) {
	stamp := metav1.NewTime(time.Date(2026, 3, 1, 11, 59, 0, 0, time.UTC))
	d := newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").
		status(func(s *v1.ClusterStatus) { s.LastRetentionRunTime = &stamp }).decide()
	if d.Status.LastRetentionRunTime == nil || !d.Status.LastRetentionRunTime.Equal(&stamp) {
		t.Errorf("lastRetentionRunTime %v, want %v", d.Status.LastRetentionRunTime, stamp)
	}
}
