package cluster

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

// TestFailoverPastACaughtUpOldPrimary: under required, with the Lease recording the old primary's
// semi-sync fallback, the old primary comes back read-only and its replicas hold everything it
// executed. The failover records that (status.fallbackCaughtUp) before it acts on the old
// primary, and, once the old primary's Pod is deleted and no longer answers, goes on instead of
// blocking again. Each reconcile reads the status back through the API (times to the second;
// the Lease dates the fallback to the nanosecond), and the status write of the reconcile that
// deletes the Pod is lost (a conflict), as it was on the node.
func TestFailoverPastACaughtUpOldPrimary(t *testing.T) {
	w := newWorld(3).instance(1, false).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
		failingSince(testNow.Add(-time.Minute)).spec(requiredSemiSync).lease("db-1", testNow.Add(-30*time.Second)).
		withFallback("db-1", uuidA+":1-5")
	w.o.Lease.Fallback.FellBackAt = w.o.Lease.Fallback.FellBackAt.Add(206411765 * time.Nanosecond)
	w.o.Cluster.Status.CurrentPrimaryTimestamp = &metav1.Time{Time: testNow.Add(-time.Hour)}
	w.o.Cluster.Status = throughAPI(t, w.o.Cluster.Status)
	w.reports(map[string]*instanceclient.Status{
		"db-1": replicaReport("", uuidA+":1-9", "", false),
		"db-2": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", false),
		"db-3": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", false),
	}, nil)
	w.o.Reports["db-1"].Replication = nil
	look := func(at time.Duration, keepStatus bool) Decision {
		t.Helper()
		w.o.Now = testNow.Add(at)
		d := w.decide()
		if keepStatus {
			w.o.Cluster.Status = throughAPI(t, d.Status)
		}
		return d
	}

	d := look(0, true)
	if fd := d.Failover.Decision; fd.Kind != failover.Wait || w.o.Cluster.Status.FallbackCaughtUp == nil {
		t.Fatalf("first look: %s %s (%s), fallbackCaughtUp %+v: want a wait while the catch-up is recorded",
			fd.Kind, fd.Step, fd.Reason, w.o.Cluster.Status.FallbackCaughtUp)
	}
	if d.Failover.DeletePod != "" || len(d.Failover.StopIO) > 0 || d.Failover.Fence != nil {
		t.Fatalf("first look acts on the old primary before its catch-up is recorded: %+v", d.Failover)
	}

	d = look(500*time.Millisecond, false) // the Pod is deleted, the status write conflicts
	if fd := d.Failover.Decision; fd.Step != failover.StepDeletePod || d.Failover.DeletePod != "db-1" {
		t.Fatalf("second look: %s %s (%s), want db-1's Pod deleted", fd.Kind, fd.Step, fd.Reason)
	}
	w.deleting("db-1")
	delete(w.o.Reports, "db-1")
	w.o.ReportErrors = map[string]string{"db-1": "connection refused"}

	d = look(time.Second, true)
	if fd := d.Failover.Decision; fd.Kind == failover.Blocked {
		t.Fatalf("third look, db-1's Pod being deleted: blocked again (%s)", fd.Reason)
	}
	if fd := d.Failover.Decision; fd.Step != failover.StepSetTargetPrimary {
		t.Errorf("third look: %s %s (%s), want the target named", fd.Kind, fd.Step, fd.Reason)
	}
}
