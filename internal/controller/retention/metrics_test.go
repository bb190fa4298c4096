package retention_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/metricstest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
)

// metric is the value of the Cluster db's series name with the extra labels; -1 when none.
func (w *retWorld) metric(name string, extra ...string) float64 {
	w.T.Helper()
	return metricstest.ClusterValue(w.T, w.NS, "db", name, extra...)
}

// TestRetentionMetrics: each pass is counted by its result; the bytes a pass deletes are added;
// the last failure shows while the last pass failed; a reconcile that runs no pass counts
// nothing; the series go with the Cluster.
func TestRetentionMetrics(t *testing.T) {
	w := newRetWorld(t)
	w.createCluster("db", "7d", true)
	w.uploadBackup("db", "old", 20*day)
	w.uploadBackup("db", "new", day)
	entries, err := w.direct().ListBackups(w.Ctx, "db")
	check.Must(t, err)
	var oldBytes int64
	for _, e := range entries {
		if e.Ref.Name == "old" {
			oldBytes = e.Size
		}
	}
	if oldBytes == 0 {
		t.Fatalf("the expired backup's size is unknown: %+v", entries)
	}

	w.reconcileOK("db")
	w.reconcileOK("db") // not due again: no pass
	for name, want := range map[string]float64{"cnm_retention_deleted_bytes_total": float64(oldBytes), "cnm_retention_last_failure": 0} {
		if got := w.metric(name); got != want {
			t.Errorf("after a pass: %s = %v, want %v", name, got, want)
		}
	}
	if s, f := w.metric("cnm_retention_runs_total", "result", "success"), w.metric("cnm_retention_runs_total", "result", "failure"); s != 1 || f != 0 {
		t.Errorf("after a pass: success %v, failure %v; want 1, 0", s, f)
	}

	w.store.Proxy.Inject(s3proxy.Fault{Match: s3proxy.All(), Action: s3proxy.Status(http.StatusServiceUnavailable)})
	w.Clock.Step(61 * time.Minute)
	if _, err := w.reconcile("db"); err != nil {
		t.Fatal(err)
	}
	if f, last := w.metric("cnm_retention_runs_total", "result", "failure"), w.metric("cnm_retention_last_failure"); f != 1 || last != 1 {
		t.Errorf("after a failed pass: failure %v, last failure %v; want 1, 1", f, last)
	}

	w.store.Proxy.ClearFaults()
	w.Clock.Step(2 * time.Minute)
	w.reconcileOK("db")
	if s, last := w.metric("cnm_retention_runs_total", "result", "success"), w.metric("cnm_retention_last_failure"); s != 2 || last != 0 {
		t.Errorf("after the retry succeeded: success %v, last failure %v; want 2, 0", s, last)
	}
	if got := w.metric("cnm_retention_deleted_bytes_total"); got != float64(oldBytes) {
		t.Errorf("nothing more to delete: deleted bytes %v, want %d", got, oldBytes)
	}

	// Its object store removed, the Cluster has no retention series (a last failure would alert
	// for ever otherwise).
	w.store.Proxy.Inject(s3proxy.Fault{Match: s3proxy.All(), Action: s3proxy.Status(http.StatusServiceUnavailable)})
	w.Clock.Step(61 * time.Minute)
	if _, err := w.reconcile("db"); err != nil {
		t.Fatal(err)
	}
	if last := w.metric("cnm_retention_last_failure"); last != 1 {
		t.Fatalf("after a failed pass: last failure %v, want 1", last)
	}
	var c v1.Cluster
	check.Must(t, w.Client.Get(w.Ctx, client.ObjectKey{Namespace: w.NS, Name: "db"}, &c))
	c.Spec.Backup = nil // a retention policy needs an object store: both go
	check.Must(t, w.Client.Update(w.Ctx, &c))
	if _, err := w.reconcile("db"); err != nil {
		t.Fatal(err)
	}
	n, err := testutil.GatherAndCount(metricstest.Of(ctrlmetrics.Registry, map[string]string{"namespace": w.NS, "cluster": "db"}),
		"cnm_retention_runs_total", "cnm_retention_deleted_bytes_total", "cnm_retention_last_failure")
	if err != nil || n != 0 {
		t.Errorf("after the object store's removal: %d series (%v), want none", n, err)
	}

	check.Must(t, w.Client.Delete(w.Ctx, &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.NS, Name: "db"}}))
	w.Eventually("db gone", w.Gone(&v1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.NS, Name: "db"}}))
	if _, err := w.reconcile("db"); err != nil {
		t.Fatal(err)
	}
	n, err = testutil.GatherAndCount(metricstest.Of(ctrlmetrics.Registry, map[string]string{"namespace": w.NS, "cluster": "db"}),
		"cnm_retention_runs_total", "cnm_retention_deleted_bytes_total", "cnm_retention_last_failure")
	if err != nil || n != 0 {
		t.Errorf("after the Cluster's deletion: %d series (%v), want none", n, err)
	}
}
