package cluster

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

// healthyThree is db-1 primary of db-2 and db-3, every one answering; db-3 has received two
// transactions it has not applied, lags 4 s, and its receiver failed once.
func healthyThree() *world {
	r3 := replicaReport("db-1", uuidA+":1-8", uuidA+":1-10", true)
	r3.Replication.LagSeconds, r3.Replication.IOState = 4, "Yes"
	r3.Replication.LastIOError = "error reconnecting to source: " + strings.Repeat("x", 400)
	p := primaryReport(uuidA + ":1-10")
	p.SemiSync = &instanceclient.SemiSyncStatus{Active: false, WaitForReplicaCount: 1, Clients: 1, FallenBack: true}
	p.AckWaiters = 3
	return newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
		reports(map[string]*instanceclient.Status{"db-1": p,
			"db-2": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true), "db-3": r3}, nil)
}

// TestStatusHealth: what the status says of each instance's channel, the primary's semi-sync, a
// failover's safety and the updates pending, one row per rule.
func TestStatusHealth(t *testing.T) {
	runCases(t, []ruleCase{
		{"instanceReplication: lag in seconds and transactions received not applied, the threads, errors shortened; none for the primary",
			healthyThree(), func(t *testing.T, d Decision) {
				r := d.Status.InstanceReplication
				got := r["db-3"]
				if _, ok := r["db-1"]; ok || len(r) != 2 || got.Source != "db-1" || !got.IORunning || !got.SQLRunning || got.IOState != "Yes" ||
					got.LagSeconds == nil || *got.LagSeconds != 4 || got.LagTransactions == nil || *got.LagTransactions != 2 ||
					len(got.LastIOError) > maxThreadError || !strings.HasPrefix(got.LastIOError, "error reconnecting") {
					t.Fatalf("%+v", r)
				}
				if z := r["db-2"]; z.LagTransactions == nil || *z.LagTransactions != 0 {
					t.Fatalf("db-2: %+v", z)
				}
			}},
		{"instanceReplication: an unknown lag is left out, and an instance that did not answer too",
			healthyThree().reports(map[string]*instanceclient.Status{"db-2": func() *instanceclient.Status {
				r := replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", false)
				r.Replication.LagSeconds = -1
				return r
			}()}, map[string]string{"db-3": "timeout"}), func(t *testing.T, d Decision) {
				r := d.Status.InstanceReplication
				if _, ok := r["db-3"]; ok || len(r) != 1 || r["db-2"].LagSeconds != nil || r["db-2"].IORunning {
					t.Fatalf("%+v", r)
				}
			}},
		{"semiSync: fallen back and the commits waiting, as the primary reports them", healthyThree(), func(t *testing.T, d Decision) {
			s := d.Status.SemiSync
			if s == nil || s.Active || !s.FallenBack || s.WaitingCommits != 3 || s.Clients != 1 {
				t.Fatalf("%+v", s)
			}
		}},
		{"failoverReadiness: safe with every replica answering, naming the most advanced", healthyThree().
			reports(map[string]*instanceclient.Status{"db-1": primaryReport(uuidA + ":1-10"),
				"db-2": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", true), "db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true)}, nil),
			func(t *testing.T, d Decision) {
				r := d.Status.FailoverReadiness
				if r == nil || !r.Safe || r.Candidate != "db-3" || r.LastTransitionTime == nil || !r.LastTransitionTime.Time.Equal(testNow) {
					t.Fatalf("%+v", r)
				}
			}},
		{"failoverReadiness: a fenced primary is reported, and nothing acts on it", healthyThree().fence(`["db-1"]`), func(t *testing.T, d Decision) {
			if r := d.Status.FailoverReadiness; r == nil || r.Safe || r.Reason != "PrimaryFenced" {
				t.Fatalf("%+v", r)
			}
			if d.Status.TargetPrimary != "db-1" || d.Failover.Demote != nil || d.Failover.DeletePod != "" || len(d.Failover.StopIO) > 0 {
				t.Fatalf("the assessment acted: %+v", d.Failover)
			}
		}},
		{"failoverReadiness: the time of the last change is kept while the verdict holds",
			healthyThree().status(func(s *v1.ClusterStatus) {
				at := metav1.NewTime(testNow.Add(-time.Hour))
				s.FailoverReadiness = &v1.FailoverReadiness{Safe: true, Reason: "CandidateReady", Candidate: "db-3", LastTransitionTime: &at}
			}), func(t *testing.T, d Decision) {
				r := d.Status.FailoverReadiness
				if r == nil || r.Reason != "CandidateReady" || r.Candidate != "db-2" || !r.LastTransitionTime.Time.Equal(testNow.Add(-time.Hour)) {
					t.Fatalf("%+v", r)
				}
			}},
		{"failoverReadiness: without reports, NoReports",
			newWorld(2).instance(1, true).instance(2, true).primary("db-1", "db-1"), func(t *testing.T, d Decision) {
				if r := d.Status.FailoverReadiness; r == nil || r.Safe || r.Reason != readinessNoReports {
					t.Fatalf("%+v", r)
				}
			}},
		{"pendingUpdates: Pods on an older spec, the primary last", healthyThree().newImage(), func(t *testing.T, d Decision) {
			p := d.Status.PendingUpdates
			if len(p) != 1 || p[0].Kind != v1.PendingPodSpec || !slices.Equal(p[0].Instances, []string{"db-3", "db-2", "db-1"}) {
				t.Fatalf("%+v", p)
			}
		}},
		{"pendingUpdates: parameters waiting for a restart, with their names",
			healthyThree().withParameters(map[string]string{"innodb_log_buffer_size": "32M"}, map[string]*instanceclient.ParametersReport{
				"db-1": {PendingRestart: []string{"innodb_log_buffer_size"}}}), func(t *testing.T, d Decision) {
				p := d.Status.PendingUpdates
				if len(p) != 1 || p[0].Kind != v1.PendingParameterRestart || !slices.Equal(p[0].Instances, []string{"db-1"}) ||
					p[0].Detail != "innodb_log_buffer_size" {
					t.Fatalf("%+v", p)
				}
			}},
		{"pendingUpdates: instance managers running another binary than the operator's", func() *world {
			w := healthyThree()
			w.o.ManagerBinary = &instances.ManagerBinary{Version: "1.2.0", SHA256: "new"}
			w.o.Reports["db-2"].Manager = &instanceclient.ManagerIdentity{Version: "1.1.0", SHA256: "old"}
			w.o.Reports["db-3"].Manager = &instanceclient.ManagerIdentity{Version: "1.2.0", SHA256: "new"}
			return w
		}(), func(t *testing.T, d Decision) {
			p := d.Status.PendingUpdates
			if len(p) != 1 || p[0].Kind != v1.PendingInstanceManager || !slices.Equal(p[0].Instances, []string{"db-2"}) || p[0].Detail != "to 1.2.0" {
				t.Fatalf("%+v", p)
			}
		}},
		{"pendingUpdates: none when every instance runs the spec", healthyThree(), func(t *testing.T, d Decision) {
			if p := d.Status.PendingUpdates; len(p) != 0 {
				t.Fatalf("%+v", p)
			}
		}},
	})
}
