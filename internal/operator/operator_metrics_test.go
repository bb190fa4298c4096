package operator_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// scrapedOperatorSeries are the operator series of the metric contract that a Cluster with an
// object store, a completed and a failed Backup, a ScheduledBackup and a Cluster the operator
// cannot decode produce. Not here: cnm_backups_restorable(_bytes), which need a listing of a real
// store, and cnm_backup_verification_*, which need a restore verification; their packages test
// them.
var scrapedOperatorSeries = []string{
	"controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total",
	"cnm_operator_undecodable_objects_total",
	"cnm_backup_last_success_timestamp_seconds", "cnm_backup_last_failure_timestamp_seconds",
	"cnm_backups_healthy", "cnm_backups_no_success_critical",
	"cnm_cluster_instances", "cnm_cluster_ready_instances", "cnm_cluster_primary_known",
	"cnm_cluster_writable_instances_seen", "cnm_cluster_fenced_instances", "cnm_cluster_diverged_instances",
	"cnm_failovers_total", "cnm_switchovers_total", "cnm_failover_duration_seconds", "cnm_failovers_blocked_total",
	"cnm_schedule_lateness_seconds", "cnm_schedule_missed_slots_total",
	"cnm_backups_total", "cnm_backup_duration_seconds", "cnm_backup_bytes",
	"cnm_retention_runs_total", "cnm_retention_deleted_bytes_total", "cnm_retention_last_failure",
}

// TestOperatorSeriesScraped runs the operator's manager as its ServiceAccount and scrapes its
// /metrics endpoint as Prometheus would (HTTPS, a token with the metrics reader role) until every
// series of scrapedOperatorSeries is there, with the Cluster's labels where it has them.
func TestOperatorSeriesScraped(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	ns := env.NewNamespace(t)
	asOperator, reader, _ := metricsAccount(t, env)
	metrics := freeAddr(t)
	create := func(obj interface {
		GetName() string
	}, write func() error) {
		t.Helper()
		if err := write(); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
	// Stored as an older, looser schema let it be.
	kubetest.StoreUndecodable(t, env.Client, "clusters", kubetest.UndecodableCluster(ns, "undecodable", ""), kubetest.UndecodableClusterPath...)
	mgr, err := operator.NewManager(asOperator, operator.Options{MetricsBindAddress: metrics, HealthProbeBindAddress: "0", RepeatableInProcess: true})
	check.Must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with %v", err)
		}
	}()

	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600, Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Backup: &v1.BackupConfiguration{RetentionPolicy: "7d", ObjectStore: &v1.ObjectStoreConfiguration{Bucket: "backups", Endpoint: "http://127.0.0.1:9",
				Credentials: v1.S3Credentials{AccessKeyID: v1.SecretKeySelector{Name: "s3", Key: "id"}, SecretAccessKey: v1.SecretKeySelector{Name: "s3", Key: "secret"}}}}}}
	create(c, func() error { return env.Client.Create(t.Context(), c) })
	// Its first primary recorded, as the instance writes it: cnm_cluster_primary_known exists
	// only once a Cluster has had one.
	check.Eventually(t, 30*time.Second, "the first primary recorded", func(ctx context.Context) (bool, error) {
		var live v1.Cluster
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(c), &live); err != nil {
			return false, err
		}
		now := metav1.Now()
		live.Status.CurrentPrimary, live.Status.CurrentPrimaryTimestamp = "db-1", &now
		return env.Client.Status().Update(ctx, &live) == nil, nil
	})
	start := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	end := metav1.NewTime(start.Add(time.Minute))
	for name, phase := range map[string]v1.BackupPhase{"done": v1.BackupPhaseCompleted, "broken": v1.BackupPhaseFailed} {
		b := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "db"}}}
		create(b, func() error { return env.Client.Create(t.Context(), b) })
		b.Status = v1.BackupStatus{Phase: phase, Size: 4096, StartedAt: &start, CompletedAt: &end}
		create(b, func() error { return env.Client.Status().Update(t.Context(), b) })
	}
	sb := &v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
		Spec: v1.ScheduledBackupSpec{Schedule: "0 0 0 * * *", Immediate: ptr.To(true), Cluster: v1.LocalObjectReference{Name: "db"}}}
	create(sb, func() error { return env.Client.Create(t.Context(), sb) })
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	var missing []string
	check.Eventually(t, 90*time.Second, "every operator series in a scrape", func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+metrics+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+reader)
		resp, err := insecure.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			return false, err
		}
		missing = missingSeries(string(body), ns)
		return len(missing) == 0, nil
	}, func() string { return "missing: " + strings.Join(missing, ", ") })
}

// missingSeries lists the names of scrapedOperatorSeries without a sample in body, a cnm_ series
// counting only with namespace ns.
func missingSeries(body, ns string) []string {
	var out []string
	for _, name := range scrapedOperatorSeries {
		found := false
		for line := range strings.SplitSeq(body, "\n") {
			sample, _, _ := strings.Cut(line, " ")
			metric, labels, _ := strings.Cut(sample, "{")
			if strings.HasPrefix(line, "#") || (metric != name && metric != name+"_count") {
				continue
			}
			if !strings.HasPrefix(name, "cnm_") || strings.Contains(labels, `namespace="`+ns+`"`) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, name)
		}
	}
	return out
}
