package cluster

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

func TestDecideRouting(t *testing.T) {
	three := func() *world { return newWorld(3).instance(1, true).instance(2, true).instance(3, true) }
	for _, tc := range []struct {
		rule  string
		world *world
		want  []podRelabel
	}{
		{"labels that match the status are left alone", three().primary("db-1", "db-1"), nil},
		{"the reported primary is labelled primary; the old one is demoted first", three().primary("db-2", "db-2"),
			[]podRelabel{{"db-1", "replica", true}, {"db-2", "primary", true}}},
		{"a switchover target keeps its replica role (and ro) until it is recorded primary", three().primary("db-1", "db-3"), nil},
		{"a fenced instance loses routable", three().primary("db-1", "db-1").fence(`["db-2"]`),
			[]podRelabel{{"db-2", "replica", false}}},
		{"a diverged instance loses routable", three().primary("db-1", "db-1").
			status(func(s *v1.ClusterStatus) { s.DivergedInstances = []string{"db-3"} }),
			[]podRelabel{{"db-3", "replica", false}}},
		{"a replica lagging past the bound loses routable", three().primary("db-1", "db-1").lagBound(time.Minute).
			reports(map[string]*instanceclient.Status{"db-2": {Replication: &instanceclient.ReplicationStatus{SQLRunning: true, LagSeconds: 61}},
				"db-1": {Replication: &instanceclient.ReplicationStatus{LagSeconds: -1}}}, nil),
			[]podRelabel{{"db-2", "replica", false}}},
		{"a terminating primary keeps its role and loses routable", three().primary("db-1", "db-1").deleting("db-1"),
			[]podRelabel{{"db-1", "primary", false}}},
		{"a terminating replica loses routable", three().primary("db-1", "db-1").deleting("db-3"),
			[]podRelabel{{"db-3", "replica", false}}},
		{"a suspected primary (its Lease renewal overdue, its control API silent) loses routable",
			three().primary("db-1", "db-1").lease("db-1", testNow.Add(-10*time.Second)).
				reports(map[string]*instanceclient.Status{"db-2": replicaReport("db-1", uuidA+":1-3", uuidA+":1-3", true),
					"db-3": replicaReport("db-1", uuidA+":1-3", uuidA+":1-3", true)}, map[string]string{"db-1": "timeout"}),
			[]podRelabel{{"db-1", "primary", false}}},
		{"a demoted primary that still ends client sessions becomes a replica out of every Service",
			three().primary("db-2", "db-2").reports(map[string]*instanceclient.Status{
				"db-1": endingSessionsReport(replicaReport("db-2", uuidA+":1-3", uuidA+":1-3", true))}, nil),
			[]podRelabel{{"db-1", "replica", false}, {"db-2", "primary", true}}},
		{"a replica that reports ending client sessions leaves -ro and -r", three().primary("db-1", "db-1").
			reports(map[string]*instanceclient.Status{"db-2": endingSessionsReport(replicaReport("db-1", uuidA+":1-3", uuidA+":1-3", true))}, nil),
			[]podRelabel{{"db-2", "replica", false}}},
		{"a primary that ends sessions (writable again, its sweep ending) keeps -rw",
			three().primary("db-1", "db-1").reports(map[string]*instanceclient.Status{"db-1": endingSessionsReport(primaryReport(uuidA + ":1-3"))}, nil),
			nil},
		{"a primary whose renewal is overdue but that answers stays routable",
			three().primary("db-1", "db-1").lease("db-1", testNow.Add(-10*time.Second)).
				reports(map[string]*instanceclient.Status{"db-1": primaryReport(uuidA + ":1-3"),
					"db-2": replicaReport("db-1", uuidA+":1-3", uuidA+":1-3", true),
					"db-3": replicaReport("db-1", uuidA+":1-3", uuidA+":1-3", true)}, nil),
			nil},
	} {
		// The Pods were labelled for db-1 as primary.
		for i := range tc.world.o.Pods {
			p := &tc.world.o.Pods[i]
			p.Labels = specs.InstanceLabels("db", p.Name, map[bool]string{true: "primary", false: "replica"}[p.Name == "db-1"], true)
		}
		got := tc.world.decide().Relabel
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: relabel %+v, want %+v", tc.rule, got, tc.want)
		}
	}
}

func TestDecideServices(t *testing.T) {
	w := newWorld(1).instance(1, true).primary("db-1", "db-1")
	w.o.Cluster.Spec.Managed = &v1.ManagedConfiguration{Services: &v1.ManagedServices{
		DisabledDefaultServices: []v1.ServiceSelectorType{v1.ServiceSelectorTypeRO},
		Additional:              []v1.ManagedService{{Name: "lb", SelectorType: v1.ServiceSelectorTypeRW}},
	}}
	w.o.Services = []corev1.Service{*specs.BuildInstanceService(w.o.Cluster, "db-1")}
	for _, n := range []string{"db-rw", "db-ro", "db-r", "db-old"} {
		w.o.Services = append(w.o.Services, corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	d := w.decide()
	got := namesOf(d.Services, func(s *corev1.Service) string { return s.Name })
	if !slices.Equal(got, []string{"db-1", "db-rw", "db-r", "db-lb"}) {
		t.Errorf("desired Services: per-instance, enabled defaults, additional: %v", got)
	}
	if !slices.Equal(d.DeleteServices, []string{"db-ro", "db-old"}) {
		t.Errorf("a disabled default and an undeclared additional Service are deleted: %v", d.DeleteServices)
	}
}

func TestReplicaServesReads(t *testing.T) {
	rep := func(lag int64, sql bool, lastErr string) *instanceclient.Status {
		return &instanceclient.Status{Replication: &instanceclient.ReplicationStatus{LagSeconds: lag, SQLRunning: sql,
			LastError: lastErr, LastSQLError: lastErr}}
	}
	sourceGone := &instanceclient.Status{Replication: &instanceclient.ReplicationStatus{LagSeconds: -1, SQLRunning: true,
		IOState: "Connecting", LastError: "error connecting to source", LastIOErrno: 2003, LastIOError: "error connecting to source"}}
	const bound = 30 * time.Second
	for _, tc := range []struct {
		rule     string
		report   *instanceclient.Status
		routable bool
		want     bool
	}{
		{"no report changes nothing", nil, true, true},
		{"a replica within the bound serves reads", rep(30, true, ""), true, true},
		{"a replica lagging past the bound serves no reads", rep(31, true, ""), true, false},
		{"a stopped applier serves no reads", rep(0, false, ""), true, false},
		{"an applier error serves no reads", rep(0, true, "1062"), true, false},
		{"an unknown lag keeps a serving replica in", rep(-1, true, ""), true, true},
		{"an unknown lag keeps an excluded replica out", rep(-1, true, ""), false, false},
		{"a replica whose source is gone (receiver error) keeps serving stale reads", sourceGone, true, true},
		{"an excluded replica stays out until within half the bound", rep(20, true, ""), false, false},
		{"an excluded replica returns within half the bound", rep(15, true, ""), false, true},
	} {
		if got := replicaServesReads(tc.report, tc.routable, bound); got != tc.want {
			t.Errorf("%s: %v", tc.rule, got)
		}
	}
	if !replicaServesReads(rep(999, true, ""), true, 0) {
		t.Error("a zero bound disables the check")
	}
}

func TestRelabelAfterDeletions(t *testing.T) {
	relabel := []podRelabel{{"db-1", "primary", false}, {"db-2", "replica", true}, {"db-3", "replica", false}}
	for _, tc := range []struct {
		name string
		d    Decision
		want []string
	}{
		{"nothing deleted: every change", Decision{Relabel: relabel}, []string{"db-1", "db-2", "db-3"}},
		{"the old primary's Pod the failover deletes is not relabelled",
			Decision{Relabel: relabel, Failover: FailoverWork{DeletePod: "db-1"}}, []string{"db-2", "db-3"}},
		{"a Pod a rolling update deletes is not relabelled", Decision{Relabel: relabel, DeletePods: []string{"db-3"}}, []string{"db-1", "db-2"}},
		{"a detached instance's Pod is not relabelled", Decision{Relabel: relabel, Detach: "db-2"}, []string{"db-1", "db-3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := namesOf(tc.d.relabelAfterDeletions(), func(ch podRelabel) string { return ch.Pod })
			if !slices.Equal(got, tc.want) {
				t.Errorf("relabelled %v, want %v", got, tc.want)
			}
		})
	}
}

// endingSessionsReport is st as an instance reports it while it ends every client session.
func endingSessionsReport(st *instanceclient.Status) *instanceclient.Status {
	st.EndingSessions = true
	return st
}

// TestEndingSessionsRequeue: while an instance reports ending client sessions the Cluster is
// reconciled again within endingSessionsRequeue, so that it serves reads as soon as its sweep is
// over; without one, the report interval stands.
func TestEndingSessionsRequeue(t *testing.T) {
	world := func(ending bool) *world {
		r := replicaReport("db-1", uuidA+":1-3", uuidA+":1-3", true)
		r.EndingSessions = ending
		return newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
			reports(map[string]*instanceclient.Status{"db-1": primaryReport(uuidA + ":1-3"), "db-2": r,
				"db-3": replicaReport("db-1", uuidA+":1-3", uuidA+":1-3", true)}, nil)
	}
	if got := world(true).decide().requeueAfter(testNow, time.Minute); got != endingSessionsRequeue {
		t.Errorf("requeue after %s while db-2 ends sessions, want %s", got, endingSessionsRequeue)
	}
	if got := world(false).decide().requeueAfter(testNow, time.Minute); got <= endingSessionsRequeue {
		t.Errorf("requeue after %s with no sweep under way, want the longer period", got)
	}
}
