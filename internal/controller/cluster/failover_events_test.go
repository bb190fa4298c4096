package cluster

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

// throughAPI returns st as the operator reads it back from the API server: every time kept to
// the second.
func throughAPI(t *testing.T, st v1.ClusterStatus) v1.ClusterStatus {
	t.Helper()
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var out v1.ClusterStatus
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// reasons returns "Reason: message" of every Event of d, in act's order.
func reasons(d Decision) []string {
	var out []string
	for step := stepSecrets; step <= stepSemiSync; step++ {
		for _, e := range stepEvents(d, step) {
			out = append(out, e.Kind.Reason+": "+e.Message)
		}
	}
	return out
}

// TestFastFailoverEventSequence: a failover whose every step falls within one second of the
// failure (the primary's Pod deleted, the replicas answering at once, the new primary promoting
// itself and recording it in the same second), or whose new primary stamps its promotion with a
// clock running behind the operator's, is reported as a failover from the old primary to the new
// one, never as the old primary recovering. Each reconcile reads the status the previous one wrote
// back through the API (times to the second); the instance's own write of currentPrimary lands
// between two reconciles.
func TestFastFailoverEventSequence(t *testing.T) {
	for _, tc := range []struct {
		name string
		// promotedAt is the time the new primary stamps on currentPrimaryTimestamp, by its clock,
		// relative to the operator's first look at the failure.
		promotedAt time.Duration
	}{
		{"every step within the second of the failure", 700 * time.Millisecond},
		{"the new primary's clock 3 s behind the operator's", 700*time.Millisecond - 3*time.Second},
		{"a failover that takes seconds", 2500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := testNow.Truncate(time.Second).Add(100 * time.Millisecond)
			w := newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
				deleting("db-1")
			w.o.Cluster.Status.CurrentPrimaryTimestamp = &metav1.Time{Time: start.Add(-time.Hour)}
			w.reports(map[string]*instanceclient.Status{
				"db-2": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
				"db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
			}, nil)
			var events []string
			step := func(at time.Duration) Decision {
				t.Helper()
				w.o.Now = start.Add(at)
				d := w.decide()
				events = append(events, reasons(d)...)
				w.o.Cluster.Status = throughAPI(t, d.Status)
				return d
			}
			step(0) // the primary is failing
			if d := step(50 * time.Millisecond); d.Failover.Decision.Step != failover.StepStopIOThreads {
				t.Fatalf("second look: %s (%s), want the IO threads stopped", d.Failover.Decision.Step, d.Failover.Decision.Reason)
			}
			w.reports(map[string]*instanceclient.Status{
				"db-2": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", false),
				"db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", false),
			}, nil)
			if d := step(100 * time.Millisecond); d.Failover.Decision.Step != failover.StepSetTargetPrimary {
				t.Fatalf("third look: %s (%s), want the target set", d.Failover.Decision.Step, d.Failover.Decision.Reason)
			}
			target := w.o.Cluster.Status.TargetPrimary
			other := "db-2"
			if target == "db-2" {
				other = "db-3"
			}
			// The target promotes itself and records it (the instance manager's write, on its
			// clock), the old primary's Pod is recreated and rejoins: the operator's next look
			// sees only this end state.
			promoted := start.Add(tc.promotedAt)
			w.o.Cluster.Status.CurrentPrimary = target
			w.o.Cluster.Status.CurrentPrimaryTimestamp = &metav1.Time{Time: promoted}
			w.o.Cluster.Status = throughAPI(t, w.o.Cluster.Status)
			w.withoutPod("db-1").withPodBack("db-1")
			w.reports(map[string]*instanceclient.Status{
				target: primaryReport(uuidA + ":1-11"),
				other:  replicaReport(target, uuidA+":1-11", uuidA+":1-11", true),
				"db-1": replicaReport(target, uuidA+":1-11", uuidA+":1-11", true),
			}, nil)
			at := max(tc.promotedAt, 200*time.Millisecond) + 100*time.Millisecond
			for i := 0; i < 3 && w.o.Cluster.Status.PrimaryFailingSince != nil; i++ {
				step(at + time.Duration(i)*50*time.Millisecond)
			}
			if w.o.Cluster.Status.PrimaryFailingSince != nil || w.o.Cluster.Status.FailingPrimary != "" {
				t.Fatalf("the failover's record is not cleared: %+v", w.o.Cluster.Status)
			}
			for _, want := range []string{failover.EventPrimaryFailing, failover.EventFailoverStarted, failover.EventFailoverPromoting,
				failover.EventFailoverCompleted} {
				if !slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, want+":") }) {
					t.Errorf("no %s Event; Events: %q", want, events)
				}
			}
			for _, e := range events {
				if strings.HasPrefix(e, failover.EventPrimaryRecovered+":") {
					t.Errorf("a failover reported as %q; Events: %q", e, events)
				}
				if strings.HasPrefix(e, failover.EventFailoverCompleted+":") && (!strings.Contains(e, "db-1") || !strings.Contains(e, target)) {
					t.Errorf("%q does not name the old primary db-1 and the new one %s", e, target)
				}
			}
		})
	}
}
