package cluster

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

func (w *world) reports(r map[string]*instanceclient.Status, errs map[string]string) *world {
	w.o.Reports, w.o.ReportErrors = r, errs
	return w
}

func (w *world) lagBound(d time.Duration) *world { w.o.MaxReadLag = d; return w }

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
		{"a switchover target loses its replica role while it promotes", three().primary("db-1", "db-3"),
			[]podRelabel{{"db-3", "", true}}},
		{"a fenced instance loses routable", three().primary("db-1", "db-1").
			status(func(s *v1.ClusterStatus) { s.FencedInstances = []string{"db-2"} }),
			[]podRelabel{{"db-2", "replica", false}}},
		{"a diverged instance loses routable", three().primary("db-1", "db-1").
			status(func(s *v1.ClusterStatus) { s.DivergedInstances = []string{"db-3"} }),
			[]podRelabel{{"db-3", "replica", false}}},
		{"a replica lagging past the bound loses routable", three().primary("db-1", "db-1").lagBound(time.Minute).
			reports(map[string]*instanceclient.Status{"db-2": {Replication: &instanceclient.ReplicationStatus{SQLRunning: true, LagSeconds: 61}},
				"db-1": {Replication: &instanceclient.ReplicationStatus{LagSeconds: -1}}}, nil),
			[]podRelabel{{"db-2", "replica", false}}},
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
		{"Degraded when an instance does not answer", newWorld(1).instance(1, true).primary("db-1", "db-1").
			reports(nil, map[string]string{"db-1": "timeout"}),
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

func TestPlanCertificates(t *testing.T) {
	c := newWorld(2).o.Cluster
	ca, err := certs.NewCA("db-ca", testNow)
	if err != nil {
		t.Fatal(err)
	}
	issued := map[string][]byte{}
	for _, w := range planCertificates(c, []string{"db-1"}, ca, nil, testNow) {
		kp, err := certs.Issue(ca, w.Request, testNow)
		if err != nil {
			t.Fatal(err)
		}
		issued[w.Secret] = kp.CertPEM
	}
	secrets := func(work []CertWork) []string {
		return namesOf(work, func(w CertWork) string { return w.Secret + ":" + w.Reason })
	}
	for _, tc := range []struct {
		rule      string
		instances []string
		existing  map[string][]byte
		at        time.Time
		mutate    func(*v1.Cluster)
		want      []string
	}{
		{"everything is issued on creation", []string{"db-1"}, nil, testNow, nil,
			[]string{"db-1-server-tls:missing", "db-operator-client-tls:missing", "db-replication-client-tls:missing"}},
		{"nothing while certificates are fresh", []string{"db-1"}, issued, testNow, nil, []string{}},
		{"a new instance gets its server certificate", []string{"db-1", "db-2"}, issued, testNow, nil,
			[]string{"db-2-server-tls:missing"}},
		{"all are renewed near expiry", []string{"db-1"}, issued, testNow.Add(certs.LeafValidity - time.Hour), nil,
			[]string{"db-1-server-tls:expiring", "db-operator-client-tls:expiring", "db-replication-client-tls:expiring"}},
		{"a new additional Service reissues server certificates only", []string{"db-1"}, issued, testNow,
			func(c *v1.Cluster) {
				c.Spec.Managed = &v1.ManagedConfiguration{Services: &v1.ManagedServices{
					Additional: []v1.ManagedService{{Name: "lb", SelectorType: v1.ServiceSelectorTypeRW}}}}
			}, []string{"db-1-server-tls:names differ"}},
	} {
		cc := c.DeepCopy()
		if tc.mutate != nil {
			tc.mutate(cc)
		}
		got := secrets(planCertificates(cc, tc.instances, ca, tc.existing, tc.at))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.rule, got, tc.want)
		}
	}
}

func TestMergeEvents(t *testing.T) {
	got := mergeEvents([]kit.Event{evSecretCreated.With("a"), evInstanceCreated.With("db-1"),
		evSecretCreated.With("b")})
	if len(got) != 2 || got[0].Message != "Created Secret a; Created Secret b" || got[1].Kind.Reason != "InstanceCreated" {
		t.Errorf("Events of one reason fold into one, in first-seen order: %+v", got)
	}
}

func TestReplicaServesReads(t *testing.T) {
	rep := func(lag int64, sql bool, lastErr string) *instanceclient.Status {
		return &instanceclient.Status{Replication: &instanceclient.ReplicationStatus{LagSeconds: lag, SQLRunning: sql, LastError: lastErr}}
	}
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
		{"an unknown lag serves no reads", rep(-1, true, ""), true, false},
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

func TestDecideLostTargetPrimary(t *testing.T) {
	primaryReport := &instanceclient.Status{Role: v1.RolePrimary}
	lost := func() *world {
		return newWorld(3).instance(1, true).instance(2, true).status(func(s *v1.ClusterStatus) { s.LatestGeneratedNode = 2 })
	}
	for _, tc := range []struct {
		rule       string
		world      *world
		wantTarget string
	}{
		{"recovered from currentPrimary", lost().primary("db-2", ""), "db-2"},
		{"recovered from the one instance reporting itself primary",
			lost().reports(map[string]*instanceclient.Status{"db-2": primaryReport, "db-1": {Role: v1.RoleReplica}}, nil), "db-2"},
		{"never guessed when no instance reports itself primary", lost(), ""},
		{"never guessed when two instances report themselves primary",
			lost().reports(map[string]*instanceclient.Status{"db-1": primaryReport, "db-2": primaryReport}, nil), ""},
	} {
		d := tc.world.decide()
		if d.Status.TargetPrimary != tc.wantTarget {
			t.Errorf("%s: targetPrimary %q, want %q", tc.rule, d.Status.TargetPrimary, tc.wantTarget)
		}
		if tc.wantTarget == "" && (len(d.CreatePods) != 0 || condition(d, v1.ConditionDegraded).Reason != reasonPrimaryUnknown) {
			t.Errorf("%s: without a target nothing is added and the Cluster is degraded: %v %+v", tc.rule,
				createdPodNames(d), condition(d, v1.ConditionDegraded))
		}
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
