package cluster

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

func TestDecideFailover(t *testing.T) {
	runCases(t, []ruleCase{
		{"a primary that does not answer is failing: Degraded, not merely an unanswered instance",
			newWorld(2).instance(1, true).instance(2, true).primary("db-1", "db-1").labelled().
				reports(map[string]*instanceclient.Status{"db-2": replicaReport("db-1", uuidA+":1-3", uuidA+":1-3", true)}, map[string]string{"db-1": "timeout"}),
			func(t *testing.T, d Decision) {
				if c := condition(d, v1.ConditionDegraded); c.Reason != failover.ReasonPrimaryFailing {
					t.Errorf("Degraded = %+v", c)
				}
			}},
		{"without instance reports (no status source) no failover starts",
			newWorld(2).instance(1, true).instance(2, true).primary("db-1", "db-1").labelled().withoutPod("db-1"),
			func(t *testing.T, d Decision) {
				if d.Failover.Decision.Kind != failover.Nothing || d.Status.PrimaryFailingSince != nil || !slices.Equal(createdPodNames(d), []string{"db-1"}) {
					t.Errorf("decision %+v, created %v", d.Failover.Decision, createdPodNames(d))
				}
			}},
		{"a missing primary Pod records primaryFailingSince and is not recreated while the failover proceeds", threeFailing(),
			func(t *testing.T, d Decision) {
				if d.Status.PrimaryFailingSince == nil || !d.Status.PrimaryFailingSince.Time.Equal(testNow) {
					t.Errorf("primaryFailingSince = %v, want now", d.Status.PrimaryFailingSince)
				}
				if len(d.CreatePods) != 0 || d.Failover.HoldPod != "db-1" {
					t.Errorf("created %v, held %q; want db-1 held", createdPodNames(d), d.Failover.HoldPod)
				}
				if !slices.Contains(eventReasons(d), failover.EventPrimaryFailing) {
					t.Errorf("events %v, want %s", eventReasons(d), failover.EventPrimaryFailing)
				}
				if c := condition(d, v1.ConditionReady); c.Reason != failover.ReasonPrimaryUnavailable {
					t.Errorf("Ready = %+v", c)
				}
				if !d.needsFreshLook() {
					t.Error("a failover step is decided again on a live read")
				}
			}},
		{"a chained failover (the primary failing replaced the recorded one before it was seen healthy) records the primary it replaces",
			threeFailing().failingSince(testNow.Add(-time.Minute)).status(func(st *v1.ClusterStatus) {
				st.FailingPrimary, st.CurrentPrimaryTimestamp = "db-4", &metav1.Time{Time: testNow.Add(-30 * time.Second)}
			}),
			func(t *testing.T, d Decision) {
				if d.Failover.Decision.Kind != failover.Failover || d.Status.FailingPrimary != "db-1" {
					t.Errorf("decision %+v, failingPrimary %q; want a failover step recording db-1", d.Failover.Decision, d.Status.FailingPrimary)
				}
			}},
		{"a failure recorded by an operator that predates failingPrimary: the failover's step records the primary it replaces",
			threeFailing().failingSince(testNow.Add(-time.Minute)),
			func(t *testing.T, d Decision) {
				if d.Failover.Decision.Kind != failover.Failover || d.Status.FailingPrimary != "db-1" {
					t.Errorf("decision %+v, failingPrimary %q; want a failover step recording db-1", d.Failover.Decision, d.Status.FailingPrimary)
				}
			}},
		{"a new primary not yet healthy within its grace keeps its predecessor's record: its promotion is still reported as that failover",
			threeFailing().failingSince(testNow.Add(-time.Minute)).status(func(st *v1.ClusterStatus) {
				st.FailingPrimary, st.CurrentPrimaryTimestamp = "db-4", &metav1.Time{Time: testNow.Add(-2 * time.Second)}
			}),
			func(t *testing.T, d Decision) {
				if d.Failover.Decision.Kind != failover.Wait || d.Status.FailingPrimary != "db-4" {
					t.Errorf("decision %+v, failingPrimary %q; want a wait keeping db-4", d.Failover.Decision, d.Status.FailingPrimary)
				}
			}},
		{"catch-up: a failover target named by an older operator, without a record, gets its own history recorded (it would wait for ever)",
			threeFailing().primary("db-1", "db-3").failingSince(testNow.Add(-time.Minute)).
				status(func(st *v1.ClusterStatus) { st.TargetPrimaryTimestamp = &metav1.Time{Time: testNow.Add(-time.Second)} }),
			func(t *testing.T, d Decision) {
				rec := d.Status.TargetPrimaryCatchUp
				if rec == nil || rec.Instance != "db-3" || rec.GTIDSet != uuidA+":1-10" || !rec.TargetPrimaryTimestamp.Equal(d.Status.TargetPrimaryTimestamp) {
					t.Errorf("targetPrimaryCatchUp = %+v; want db-3's history for this primary change", rec)
				}
			}},
		{"a failover promotion blocked on a target that does not answer keeps the old primary's Pod held: it stays a failover",
			// With semi-sync on, the target that does not answer may hold acknowledged writes db-2 lacks.
			threeFailing().primary("db-1", "db-3").failingSince(testNow.Add(-time.Minute)).spec(func(s *v1.ClusterSpec) {
				s.MySQL.SemiSync = &v1.SemiSyncConfiguration{Enabled: true}
			}).reports(map[string]*instanceclient.Status{
				"db-2": replicaReport("db-1", uuidA+":1-8", uuidA+":1-8", false),
			}, map[string]string{"db-3": "timeout"}),
			func(t *testing.T, d Decision) {
				if d.Failover.Decision.Kind != failover.Blocked || d.Failover.Decision.Operation != failover.FailoverOperation {
					t.Errorf("decision %+v, want a blocked failover", d.Failover.Decision)
				}
				if len(d.CreatePods) != 0 || d.Failover.HoldPod != "db-1" {
					t.Errorf("created %v, held %q; want db-1 held", createdPodNames(d), d.Failover.HoldPod)
				}
			}},
		{"during failoverDelay the primary's Pod is recreated: it may recover",
			threeFailing().failingSince(testNow.Add(-time.Second)).spec(func(s *v1.ClusterSpec) { s.FailoverDelay = 30 }),
			func(t *testing.T, d Decision) {
				if !slices.Equal(createdPodNames(d), []string{"db-1"}) || d.Failover.Decision.Kind != failover.Wait {
					t.Errorf("created %v, decision %+v", createdPodNames(d), d.Failover.Decision)
				}
				if got := d.requeueAfter(testNow, time.Minute); got != 29*time.Second {
					t.Errorf("requeue after %s, want the end of failoverDelay (29s)", got)
				}
			}},
		{"detection: a healthy primary whose Lease the operator saw renewed is looked at again when the next renewal is due, not at the next report",
			newWorld(2).instance(1, true).instance(2, true).primary("db-1", "db-1").labelled().lease("db-1", testNow.Add(-2*time.Second)).
				reports(map[string]*instanceclient.Status{
					"db-1": primaryReport(uuidA + ":1-3"),
					"db-2": replicaReport("db-1", uuidA+":1-3", uuidA+":1-3", true),
				}, nil),
			func(t *testing.T, d Decision) {
				if d.Failover.Decision.Kind != failover.Nothing {
					t.Errorf("decision %+v", d.Failover.Decision)
				}
				if got, want := d.requeueAfter(testNow, 10*time.Second), failover.LeaseRenewInterval+failover.LeaseRenewalSlack-2*time.Second; got != want {
					t.Errorf("requeue after %s, want the renewal's due time (%s)", got, want)
				}
			}},
		{"a failover step that acts is followed by the next reconcile within stepRequeue",
			threeFailing().failingSince(testNow.Add(-time.Second)).reports(map[string]*instanceclient.Status{
				"db-2": replicaReport("db-1", uuidA+":1-8", uuidA+":1-8", true),
				"db-3": replicaReport("db-1", uuidA+":1-9", uuidA+":1-10", true),
			}, nil),
			func(t *testing.T, d Decision) {
				if d.Failover.Decision.Step != failover.StepStopIOThreads {
					t.Fatalf("decision %+v", d.Failover.Decision)
				}
				if got := d.requeueAfter(testNow, time.Minute); got != stepRequeue {
					t.Errorf("requeue after %s, want %s", got, stepRequeue)
				}
			}},
		{"a single instance cannot fail over: blocked, its Pod is recreated",
			newWorld(1).instance(1, true).primary("db-1", "db-1").labelled().withoutPod("db-1").failingSince(testNow.Add(-time.Minute)).
				reports(map[string]*instanceclient.Status{}, nil),
			func(t *testing.T, d Decision) {
				if !slices.Equal(createdPodNames(d), []string{"db-1"}) || d.Failover.Decision.Kind != failover.Blocked {
					t.Errorf("created %v, decision %+v", createdPodNames(d), d.Failover.Decision)
				}
				if c := condition(d, v1.ConditionDegraded); c.Reason != failover.ReasonFailoverBlocked {
					t.Errorf("Degraded = %+v", c)
				}
				if !slices.Contains(eventReasons(d), failover.EventFailoverBlocked) {
					t.Errorf("events %v", eventReasons(d))
				}
			}},
		{"replicas still reading from the failing primary get their IO thread stopped first",
			threeFailing().failingSince(testNow.Add(-time.Second)).reports(map[string]*instanceclient.Status{
				"db-2": replicaReport("db-1", uuidA+":1-8", uuidA+":1-8", true),
				"db-3": replicaReport("db-1", uuidA+":1-9", uuidA+":1-10", true),
			}, nil),
			func(t *testing.T, d Decision) {
				got := namesOf(d.Failover.StopIO, func(p *corev1.Pod) string { return p.Name })
				if !slices.Equal(got, []string{"db-2", "db-3"}) {
					t.Errorf("stop IO on %v, want db-2 and db-3", got)
				}
				if !slices.Contains(eventReasons(d), failover.EventFailoverStarted) || d.Status.TargetPrimary != "db-1" {
					t.Errorf("events %v, target %s", eventReasons(d), d.Status.TargetPrimary)
				}
			}},
		{"a failing primary that does not answer: the replicas' IO threads stopped, then its Pod deleted, in one act",
			newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
				failingSince(testNow.Add(-time.Minute)).reports(map[string]*instanceclient.Status{
				"db-2": replicaReport("db-1", uuidA+":1-8", uuidA+":1-8", true),
				"db-3": replicaReport("db-1", uuidA+":1-9", uuidA+":1-10", true),
			}, map[string]string{"db-1": "timeout"}),
			func(t *testing.T, d Decision) {
				got := namesOf(d.Failover.StopIO, func(p *corev1.Pod) string { return p.Name })
				if !slices.Equal(got, []string{"db-2", "db-3"}) || d.Failover.DeletePod != "db-1" {
					t.Errorf("stop IO on %v, delete %q; want db-2 and db-3, then db-1's Pod", got, d.Failover.DeletePod)
				}
				reasons := eventReasons(d)
				if !slices.Contains(reasons, failover.EventFailoverStarted) || !slices.Contains(reasons, failover.EventFailoverDeletingPod) {
					t.Errorf("events %v", reasons)
				}
				if d.Failover.Fence == nil || d.Failover.Fence.Name != "db-1" || !d.Failover.QuickDelete {
					t.Errorf("failover work %+v: want db-1's mysqld fenced before its Pod is deleted, with a short grace (its manager does not answer)", d.Failover)
				}
			}},
		{"fence: a failover naming its target while the old primary's Pod terminates, its manager silent, fences that mysqld first and shortens the Pod's grace",
			namingTargetWhileDeleting(),
			func(t *testing.T, d Decision) {
				wantTargetNamed(t, d, "db-3")
				if d.Failover.Fence == nil || d.Failover.Fence.Name != "db-1" || d.Failover.DeletePod != "db-1" || !d.Failover.QuickDelete {
					t.Errorf("failover work %+v: want db-1 fenced and its Pod deleted quickly before the target is named", d.Failover)
				}
			}},
		{"fence: an old primary's Pod whose kubelet reports its mysql container terminated is not fenced (nothing runs to answer)",
			namingTargetWhileDeleting().terminated("db-1"),
			func(t *testing.T, d Decision) {
				wantTargetNamed(t, d, "db-3")
				if d.Failover.Fence != nil {
					t.Errorf("failover work %+v: want no fence of a mysqld whose container terminated", d.Failover)
				}
			}},
		{"fence: a failover whose old primary answers fences it but leaves its Pod its own grace period",
			newWorld(3).instance(1, false).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
				failingSince(testNow.Add(-time.Second)).reports(map[string]*instanceclient.Status{
				"db-1": replicaReport("", uuidA+":1-9", "", false),
				"db-2": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", false),
				"db-3": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", false),
			}, nil),
			func(t *testing.T, d Decision) {
				if d.Failover.Fence == nil || d.Failover.DeletePod != "db-1" || d.Failover.QuickDelete {
					t.Errorf("failover work %+v", d.Failover)
				}
			}},
		{"fence: nothing is fenced while the failover waits out failoverDelay",
			newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
				spec(func(s *v1.ClusterSpec) { s.FailoverDelay = 30 }).
				failingSince(testNow.Add(-time.Second)).reports(map[string]*instanceclient.Status{
				"db-2": replicaReport("db-1", uuidA+":1-8", uuidA+":1-8", true),
				"db-3": replicaReport("db-1", uuidA+":1-9", uuidA+":1-10", true),
			}, map[string]string{"db-1": "timeout"}),
			func(t *testing.T, d Decision) {
				if d.Failover.Decision.Kind != failover.Wait || d.Failover.Fence != nil || d.Failover.DeletePod != "" {
					t.Errorf("decision %+v, work %+v", d.Failover.Decision, d.Failover)
				}
			}},
		{"a failing primary that still accepts writes is demoted through its control API, then its Pod deleted",
			newWorld(3).instance(1, false).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
				failingSince(testNow.Add(-time.Second)).reports(map[string]*instanceclient.Status{
				"db-1": primaryReport(uuidA + ":1-9"),
				"db-2": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", false),
				"db-3": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", false),
			}, nil),
			func(t *testing.T, d Decision) {
				if d.Failover.Demote == nil || d.Failover.Demote.Name != "db-1" || d.Failover.DeletePod != "db-1" {
					t.Errorf("failover work %+v: demoted, then its Pod deleted in the same act (its own role reconciler would undo the demotion)", d.Failover)
				}
			}},
		{"a failing primary seen read-only has its Pod deleted, its PVC kept",
			newWorld(3).instance(1, false).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
				failingSince(testNow.Add(-time.Second)).reports(map[string]*instanceclient.Status{
				"db-1": replicaReport("", uuidA+":1-9", "", false),
				"db-2": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", false),
				"db-3": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", false),
			}, nil),
			func(t *testing.T, d Decision) {
				if d.Failover.DeletePod != "db-1" || slices.Contains(d.DeletePods, "db-1") || d.Detach != "" {
					t.Errorf("failover work %+v, delete %v, detach %q", d.Failover, d.DeletePods, d.Detach)
				}
				if !slices.Contains(eventReasons(d), failover.EventFailoverDeletingPod) {
					t.Errorf("events %v", eventReasons(d))
				}
			}},
		{"while the old primary's Lease is live the failover waits for its expiry",
			threeFailing().failingSince(testNow.Add(-time.Second)).lease("db-1", testNow.Add(-5*time.Second)),
			func(t *testing.T, d Decision) {
				if d.Status.TargetPrimary != "db-1" || d.Failover.Decision.Kind != failover.Wait {
					t.Errorf("target %s, decision %+v", d.Status.TargetPrimary, d.Failover.Decision)
				}
				if got := d.requeueAfter(testNow, time.Minute); got != 10*time.Second {
					t.Errorf("requeue after %s, want the Lease's expiry (10s)", got)
				}
				if c := condition(d, v1.ConditionProgressing); c.Reason != failover.ReasonFailoverInProgress {
					t.Errorf("Progressing = %+v", c)
				}
			}},
		{"once the Lease expired the most advanced replica becomes targetPrimary",
			threeFailing().failingSince(testNow.Add(-time.Minute)).lease("db-1", testNow.Add(-20*time.Second)),
			func(t *testing.T, d Decision) {
				if d.Status.TargetPrimary != "db-3" || d.Status.TargetPrimaryTimestamp == nil || !d.Status.TargetPrimaryTimestamp.Time.Equal(testNow) {
					t.Errorf("target %s at %v, want db-3 now", d.Status.TargetPrimary, d.Status.TargetPrimaryTimestamp)
				}
				reasons := eventReasons(d)
				if !slices.Contains(reasons, failover.EventFailoverPromoting) || !slices.Contains(reasons, "PrimaryLeaseExpired") {
					t.Errorf("events %v", reasons)
				}
				for _, r := range d.Relabel {
					if r.Pod == "db-3" && r.Role != "" {
						t.Errorf("the target keeps no role label while it promotes: %+v", r)
					}
				}
			}},
		{"accepted data loss: the failover past a recorded fallback promotes the named replica, records what was lost and warns",
			threeFailing().failingSince(testNow.Add(-time.Minute)).lease("db-1", testNow.Add(-20*time.Second)).
				spec(requiredSemiSync).status(acceptLoss("db-1", "db-3")).withFallback("db-1", uuidA+":1-9"),
			func(t *testing.T, d Decision) {
				a := d.Status.DataLossAccepted
				if d.Status.TargetPrimary != "db-3" || a == nil || a.PromotedAt == nil || !a.PromotedAt.Time.Equal(testNow) ||
					!strings.Contains(a.Lost, uuidA+":1-9") {
					t.Fatalf("target %s, status.dataLossAccepted %+v: want db-3 named now, the loss after %s:1-9 recorded", d.Status.TargetPrimary, a, uuidA)
				}
				if msg := eventMessage(d, "DataLossAccepted"); !strings.Contains(msg, "db-1") || !strings.Contains(msg, "db-3 is promoted") {
					t.Errorf("DataLossAccepted Event %q", msg)
				}
			}},
		{"accepted data loss: without the acceptance the same failover is blocked under required",
			threeFailing().failingSince(testNow.Add(-time.Minute)).lease("db-1", testNow.Add(-20*time.Second)).
				spec(requiredSemiSync).withFallback("db-1", uuidA+":1-9"),
			func(t *testing.T, d Decision) {
				if c := condition(d, v1.ConditionDegraded); d.Status.TargetPrimary != "db-1" || c.Reason != failover.ReasonAcknowledgedWritesOnPrimaryOnly ||
					!strings.Contains(c.Message, "promote <cluster> db-3 --accept-data-loss") {
					t.Errorf("target %s, Degraded %+v", d.Status.TargetPrimary, c)
				}
			}},
		{"accepted data loss: an acceptance acted on in an earlier failover does not let a later failure of the same primary through",
			threeFailing().failingSince(testNow.Add(-time.Minute)).lease("db-1", testNow.Add(-20*time.Second)).
				spec(requiredSemiSync).withFallback("db-1", uuidA+":1-9").status(func(s *v1.ClusterStatus) {
				day := metav1.NewTime(testNow.Add(-24 * time.Hour))
				s.DataLossAccepted = &v1.DataLossAcceptance{FormerPrimary: "db-1", Instance: "db-3", FailingSince: day, AcceptedAt: day,
					Lost: "earlier", PromotedAt: &day}
			}),
			func(t *testing.T, d Decision) {
				if c := condition(d, v1.ConditionDegraded); d.Status.TargetPrimary != "db-1" || c.Reason != failover.ReasonAcknowledgedWritesOnPrimaryOnly {
					t.Errorf("target %s, Degraded %+v: want the failover blocked, the old acceptance spent", d.Status.TargetPrimary, c)
				}
			}},
		{"accepted data loss: a named replica that cannot be promoted keeps the failover blocked for the same reason, so another can be named",
			threeFailing().failingSince(testNow.Add(-time.Minute)).lease("db-1", testNow.Add(-20*time.Second)).
				spec(requiredSemiSync).status(acceptLoss("db-1", "db-2")).withFallback("db-1", uuidA+":1-9"),
			func(t *testing.T, d Decision) {
				if c := condition(d, v1.ConditionDegraded); d.Status.TargetPrimary != "db-1" || c.Reason != failover.ReasonAcknowledgedWritesOnPrimaryOnly ||
					!strings.Contains(c.Message, "name db-3 instead") {
					t.Errorf("target %s, Degraded %+v", d.Status.TargetPrimary, c)
				}
			}},
		{"fallback caught up: the failing primary seen read-only after its fallback has its gtid_executed recorded for this failure",
			newWorld(3).instance(1, false).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
				failingSince(testNow.Add(-time.Second)).spec(requiredSemiSync).lease("db-1", testNow.Add(-20*time.Second)).
				withFallback("db-1", uuidA+":1-5").reports(map[string]*instanceclient.Status{
				"db-1": replicaReport("", uuidA+":1-9", "", false),
				"db-2": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", false),
				"db-3": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", false),
			}, nil),
			func(t *testing.T, d Decision) {
				f := d.Status.FallbackCaughtUp
				if f == nil || f.FormerPrimary != "db-1" || f.GTIDSet != uuidA+":1-9" || !f.FailingSince.Time.Equal(testNow.Add(-time.Second)) {
					t.Errorf("status.fallbackCaughtUp %+v: want db-1's %s:1-9 recorded for the failure since %v", f, uuidA, testNow.Add(-time.Second))
				}
			}},
		{"accepted data loss: a primary that recovers clears an acceptance not acted on",
			newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
				failingSince(testNow.Add(-time.Minute)).status(acceptLoss("db-1", "db-2")).reports(map[string]*instanceclient.Status{
				"db-1": primaryReport(uuidA + ":1-10"),
				"db-2": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
				"db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
			}, nil),
			func(t *testing.T, d Decision) {
				if d.Status.PrimaryFailingSince != nil || d.Status.DataLossAccepted != nil {
					t.Errorf("primaryFailingSince %v, dataLossAccepted %+v: want both cleared", d.Status.PrimaryFailingSince, d.Status.DataLossAccepted)
				}
			}},
		{"diverging replica histories block the failover",
			threeFailing().failingSince(testNow.Add(-time.Minute)).reports(map[string]*instanceclient.Status{
				"db-2": replicaReport("db-1", uuidA+":1-8,aaaaaaaa-71ca-11e1-9e33-c80aa9429562:1", uuidA+":1-8", false),
				"db-3": replicaReport("db-1", uuidA+":1-9", uuidA+":1-10", false),
			}, nil),
			func(t *testing.T, d Decision) {
				if d.Status.TargetPrimary != "db-1" || d.Failover.Decision.Kind != failover.Blocked {
					t.Errorf("target %s, decision %+v", d.Status.TargetPrimary, d.Failover.Decision)
				}
				if c := condition(d, v1.ConditionDegraded); c.Reason != failover.ReasonFailoverBlocked {
					t.Errorf("Degraded = %+v", c)
				}
			}},
		{"a fenced replica is never the candidate",
			threeFailing().failingSince(testNow.Add(-time.Minute)).fence(`["db-3"]`).reports(map[string]*instanceclient.Status{
				"db-2": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", false),
				"db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", false),
			}, nil),
			func(t *testing.T, d Decision) {
				if d.Status.TargetPrimary != "db-2" {
					t.Errorf("target %s, want db-2 (db-3 is fenced)", d.Status.TargetPrimary)
				}
			}},
		{"the new primary recorded: primaryFailingSince cleared, FailoverCompleted",
			newWorld(3).instance(2, true).instance(3, true).primary("db-3", "db-3").failingSince(testNow.Add(-time.Minute)).
				status(func(s *v1.ClusterStatus) { s.CurrentPrimaryTimestamp = &metav1.Time{Time: testNow.Add(-time.Second)} }).labelled().
				reports(map[string]*instanceclient.Status{
					"db-2": replicaReport("db-3", uuidA+":1-10", uuidA+":1-10", true),
					"db-3": primaryReport(uuidA + ":1-10"),
				}, nil),
			func(t *testing.T, d Decision) {
				if d.Status.PrimaryFailingSince != nil || !slices.Contains(eventReasons(d), failover.EventFailoverCompleted) {
					t.Errorf("primaryFailingSince %v, events %v", d.Status.PrimaryFailingSince, eventReasons(d))
				}
			}},
		{"the reconcile that clears a failover's primaryFailingSince records FailoverCompleted, not SwitchoverCompleted",
			newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().primary("db-3", "db-3").
				failingSince(testNow.Add(-time.Minute)).
				status(func(s *v1.ClusterStatus) { s.CurrentPrimaryTimestamp = &metav1.Time{Time: testNow.Add(-time.Second)} }).
				reports(map[string]*instanceclient.Status{
					"db-1": replicaReport("db-3", uuidA+":1-10", uuidA+":1-10", true),
					"db-2": replicaReport("db-3", uuidA+":1-10", uuidA+":1-10", true),
					"db-3": primaryReport(uuidA + ":1-10"),
				}, nil),
			func(t *testing.T, d Decision) {
				if r := eventReasons(d); !slices.Contains(r, failover.EventFailoverCompleted) || slices.Contains(r, failover.EventSwitchoverCompleted) {
					t.Errorf("events %v, want FailoverCompleted and no SwitchoverCompleted", r)
				}
			}},
		{"after a failover, the old primary's Pod being deleted with its primary label is no switchover",
			newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().primary("db-3", "db-3").
				deleting("db-1").reports(map[string]*instanceclient.Status{
				"db-2": replicaReport("db-3", uuidA+":1-10", uuidA+":1-10", true),
				"db-3": primaryReport(uuidA + ":1-10"),
			}, nil),
			func(t *testing.T, d Decision) {
				if r := eventReasons(d); slices.Contains(r, failover.EventSwitchoverCompleted) {
					t.Errorf("events %v, want no SwitchoverCompleted", r)
				}
			}},
		{"the old primary's Pod is recreated once another instance is the primary",
			newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-3", "db-3").labelled().withoutPod("db-1").
				failingSince(testNow.Add(-time.Minute)).reports(map[string]*instanceclient.Status{
				"db-2": replicaReport("db-3", uuidA+":1-10", uuidA+":1-10", true),
				"db-3": primaryReport(uuidA + ":1-10"),
			}, nil),
			func(t *testing.T, d Decision) {
				if !slices.Equal(createdPodNames(d), []string{"db-1"}) {
					t.Errorf("created %v, want db-1 back (it rejoins as a replica or is found diverged)", createdPodNames(d))
				}
			}},
	})
}

func TestDecideSwitchoverWiring(t *testing.T) {
	three := func() *world { return newWorld(3).instance(1, true).instance(2, true).instance(3, true) }
	runCases(t, []ruleCase{
		{"a switchover target that caught up: the old primary is demoted",
			three().primary("db-1", "db-1").labelled().primary("db-1", "db-2").reports(map[string]*instanceclient.Status{
				"db-1": primaryReport(uuidA + ":1-10"),
				"db-2": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
				"db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
			}, nil),
			func(t *testing.T, d Decision) {
				if d.Failover.Demote == nil || d.Failover.Demote.Name != "db-1" || d.Failover.DeletePod != "" ||
					!slices.Contains(eventReasons(d), failover.EventSwitchoverStarted) {
					t.Errorf("failover work %+v, events %v", d.Failover, eventReasons(d))
				}
				if c := condition(d, v1.ConditionProgressing); c.Reason != failover.ReasonSwitchoverInProgress {
					t.Errorf("Progressing = %+v", c)
				}
				// The promotion that ends the write gap is decided on the next reconcile.
				if got := d.requeueAfter(testNow, time.Minute); got != switchoverStepRequeue {
					t.Errorf("requeue after %s, want %s", got, switchoverStepRequeue)
				}
			}},
		{"an unreachable old primary holding its Lease: the switchover waits for the Lease",
			three().primary("db-1", "db-1").labelled().primary("db-1", "db-2").lease("db-1", testNow.Add(-3*time.Second)).
				status(func(s *v1.ClusterStatus) { s.TargetPrimaryTimestamp = &metav1.Time{Time: testNow.Add(-time.Second)} }).
				reports(map[string]*instanceclient.Status{
					"db-2": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
					"db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
				}, map[string]string{"db-1": "timeout"}),
			func(t *testing.T, d Decision) {
				if d.Failover.Decision.Kind != failover.Wait || d.Status.TargetPrimary != "db-2" {
					t.Errorf("decision %+v, target %s", d.Failover.Decision, d.Status.TargetPrimary)
				}
			}},
		{"a switchover to a fenced instance is aborted: targetPrimary back to the primary",
			three().primary("db-1", "db-1").labelled().primary("db-1", "db-2").fence(`["db-2"]`).reports(map[string]*instanceclient.Status{
				"db-1": primaryReport(uuidA + ":1-10"),
				"db-2": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
			}, nil),
			func(t *testing.T, d Decision) {
				if d.Status.TargetPrimary != "db-1" || !slices.Contains(eventReasons(d), failover.EventSwitchoverBlocked) {
					t.Errorf("target %s, events %v", d.Status.TargetPrimary, eventReasons(d))
				}
				if c := condition(d, v1.ConditionDegraded); c.Reason != failover.ReasonSwitchoverBlocked {
					t.Errorf("Degraded = %+v", c)
				}
			}},
		{"the target recorded itself: SwitchoverCompleted, the labels move",
			three().primary("db-1", "db-1").labelled().primary("db-2", "db-2").reports(map[string]*instanceclient.Status{
				"db-2": primaryReport(uuidA + ":1-10"),
				"db-1": replicaReport("db-2", uuidA+":1-10", uuidA+":1-10", true),
				"db-3": replicaReport("db-2", uuidA+":1-10", uuidA+":1-10", true),
			}, nil),
			func(t *testing.T, d Decision) {
				if !slices.Contains(eventReasons(d), "SwitchoverCompleted") {
					t.Errorf("events %v", eventReasons(d))
				}
				if len(d.Relabel) != 2 || d.Relabel[0].Pod != "db-1" || d.Relabel[1] != (podRelabel{"db-2", v1.RolePrimary, true}) {
					t.Errorf("relabel %+v", d.Relabel)
				}
			}},
	})
}

func TestDecideFencing(t *testing.T) {
	three := func() *world {
		return newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled()
	}
	runCases(t, []ruleCase{
		{"the annotation is mirrored into status.fencedInstances, with an Event", three().fence(`["db-2"]`),
			func(t *testing.T, d Decision) {
				if !slices.Equal(d.Status.FencedInstances, []string{"db-2"}) || !slices.Contains(eventReasons(d), "Fenced") {
					t.Errorf("fenced %v, events %v", d.Status.FencedInstances, eventReasons(d))
				}
				if !slices.Contains(d.Relabel, podRelabel{"db-2", v1.RoleReplica, false}) {
					t.Errorf("relabel %+v: a fenced instance loses routable", d.Relabel)
				}
			}},
		{"* fences every instance, listed by name", three().fence(`["*"]`),
			func(t *testing.T, d Decision) {
				if !slices.Equal(d.Status.FencedInstances, []string{"db-1", "db-2", "db-3"}) {
					t.Errorf("fenced %v", d.Status.FencedInstances)
				}
				if d.Failover.Decision.Kind != failover.Nothing {
					t.Errorf("a fenced primary starts no failover: %+v", d.Failover.Decision)
				}
			}},
		{"removing the annotation unfences, with an Event",
			three().status(func(s *v1.ClusterStatus) { s.FencedInstances = []string{"db-3"} }),
			func(t *testing.T, d Decision) {
				if d.Status.FencedInstances != nil || !slices.Contains(eventReasons(d), "Unfenced") {
					t.Errorf("fenced %v, events %v", d.Status.FencedInstances, eventReasons(d))
				}
			}},
		{"a malformed annotation keeps the list, Degraded and a Warning",
			three().fence(`db-2`).status(func(s *v1.ClusterStatus) { s.FencedInstances = []string{"db-3"} }),
			func(t *testing.T, d Decision) {
				if !slices.Equal(d.Status.FencedInstances, []string{"db-3"}) || !slices.Contains(eventReasons(d), reasonFencingInvalid) {
					t.Errorf("fenced %v, events %v", d.Status.FencedInstances, eventReasons(d))
				}
				if c := condition(d, v1.ConditionDegraded); c.Reason != reasonFencingInvalid || c.Status != metav1.ConditionTrue {
					t.Errorf("Degraded = %+v", c)
				}
			}},
	})
}

func TestDecideDiverged(t *testing.T) {
	d := newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-2", "db-2").labelled().
		status(func(s *v1.ClusterStatus) { s.DivergedInstances = []string{"db-1"} }).
		reports(map[string]*instanceclient.Status{"db-1": replicaReport("", uuidA+":1-11", "", false), "db-2": primaryReport(uuidA + ":1-10")}, nil).decide()
	if !slices.Contains(d.Relabel, podRelabel{"db-1", v1.RoleReplica, false}) || !slices.Contains(eventReasons(d), "InstanceDiverged") {
		t.Errorf("relabel %+v, events %v: a diverged instance leaves every Service, with a Warning", d.Relabel, eventReasons(d))
	}
	if msg := eventMessage(d, "InstanceDiverged"); !strings.Contains(msg, "errant GTIDs "+uuidA+":11") || !strings.Contains(msg, "primary db-2") {
		t.Errorf("the InstanceDiverged Event does not name the errant GTID range on db-2: %q", msg)
	}
	if d.Status.GTIDExecutedByInstance["db-1"] != uuidA+":1-11" {
		t.Errorf("gtidExecutedByInstance = %v", d.Status.GTIDExecutedByInstance)
	}
	if len(d.CreatePods) != 0 || d.Detach != "" || len(d.DeletePods) != 0 {
		t.Errorf("a diverged instance keeps its Pod and PVC: %+v", d)
	}
}
