//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/promqlnames"
	"github.com/cloudnative-mysql/cloudnative-mysql/test/monitoring"
)

// longRunEnv, set to 1, makes the monitoring test wait for alerts whose rule holds for minutes
// (CNMReplicationStopped: 5m) to fire; without it the test sees them pending, which proves their
// expression matches the real metrics, and the promtool tests prove the for: clause.
const longRunEnv = "CNM_E2E_LONG"

// monitoredCluster is a three-instance Cluster with everything that exports metrics on: semi-sync,
// backups with retention, binlog archiving, verification of every backup and the critical
// backup alert after 2m; its -r Service is disabled, which scrapers must not depend on.
func monitoredCluster(objectStore string) string {
	return `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: db}
spec:
  instances: 3
  imageName: ` + mysqlImage + `
  storage: {size: 1Gi}
  minSyncReplicas: 1
  maxSyncReplicas: 1
  mysql:
    semiSync: {enabled: true, timeoutMillis: 1000, dataDurability: preferred}
  managed:
    services: {disabledDefaultServices: [r]}
  backup:
    failureAlertAfter: 2m
    retentionPolicy: 30d
    archiveTimeout: 2s
    verification: {everyBackups: 1, checkTableBudget: 2m}
    objectStore:` + objectStore + `
`
}

// TestMonitoringOnTheNode runs Debian's Prometheus on the node with the shipped scrape
// configuration, credentials and rules: it scrapes the operator and every instance; the writable
// view counts one writable instance; backups failing past failureAlertAfter fire the critical
// alert; a replica whose applier stops on a conflicting row raises the replication alert; a
// failover is counted; every metric a rule or the dashboard reads is in the real scrape, and
// every dashboard query evaluates on it.
func TestMonitoringOnTheNode(t *testing.T) {
	store := startNodeStore(t)
	ns := Namespace(t)
	storeSecret, objectStore := store.manifests()
	Apply(t, ns, storeSecret+"---"+monitoredCluster(objectStore))
	c := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, c, "Ready", 6*time.Minute, func() []metav1.Condition { return c.Status.Conditions })
	primary := c.Status.CurrentPrimary
	sql := rootSQL(t, ns, "db")
	sql(primary, "CREATE DATABASE e2e; CREATE TABLE e2e.t (id INT PRIMARY KEY); INSERT INTO e2e.t VALUES (1), (2)")
	Apply(t, ns, `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: ScheduledBackup
metadata: {name: hourly}
spec:
  schedule: "0 0 * * * *"
  cluster: {name: db}
  immediate: true
`)
	scheduled := waitScheduledBackup(t, ns, "hourly")
	waitCluster(t, c, 5*time.Minute, "the scheduled backup verified", func(c *mysqlv1.Cluster) bool {
		l := c.Status.LastVerifiedBackup
		return l != nil && l.Name == scheduled.Name && l.Passed
	})

	prom := startPrometheus(t, prometheusOptions{namespace: ns, cluster: "db"})
	job := "cloudnative-mysql/" + ns + "/db"
	t0 := time.Now()
	prom.waitQuery(t, 2*time.Minute, "every instance scraped", `count(up{job="`+job+`"} == 1)`,
		func(s promSample) bool { return s.value() == 3 })
	prom.waitQuery(t, time.Minute, "the operator scraped", `up{job="cloudnative-mysql-operator"} == 1`, nil)
	t.Logf("the operator and the three instances scraped %s after Prometheus started", time.Since(t0).Round(time.Second))
	sel := `{namespace="` + ns + `",cluster="db"}`
	prom.waitQuery(t, time.Minute, "one writable instance, the primary", `cnm:cluster_writable_instances:sum`+sel,
		func(s promSample) bool { return s.value() == 1 })
	prom.waitQuery(t, time.Minute, "the primary reports itself", `cnm_instance_primary{namespace="`+ns+`",pod="`+primary+`"}`,
		func(s promSample) bool { return s.value() == 1 })
	prom.waitQuery(t, time.Minute, "the operator's view beside it", `cnm_cluster_writable_instances_seen`+sel,
		func(s promSample) bool { return s.value() == 1 })

	// Two faults at once: the store stops (backups fail), and a replica's applier stops on a row
	// it holds and its primary then writes too (a drift the instance manager cannot repair: it
	// restarts the applier, which stops again).
	store.stop()
	createBackup(t, ns, "while-down")
	replica := "db-3"
	if primary == replica {
		replica = "db-2"
	}
	sql(replica, "SET SESSION sql_log_bin = 0; SET GLOBAL super_read_only = OFF; INSERT INTO e2e.t VALUES (100); SET GLOBAL super_read_only = ON")
	sql(primary, "INSERT INTO e2e.t VALUES (100)")
	faults := time.Now()
	prom.waitQuery(t, 2*time.Minute, "the broken replica reports its applier stopped with an error",
		`cnm_replication_last_error{namespace="`+ns+`",pod="`+replica+`"} == 1`, nil)

	WaitFor(t, 6*time.Minute, "CNMBackupsNoRecentSuccess firing", func() (bool, error) {
		state, err := prom.alertState("CNMBackupsNoRecentSuccess", ns)
		return state == "firing", fmt.Errorf("state %q, %v", state, err)
	})
	t.Logf("CNMBackupsNoRecentSuccess fired %s after the store stopped (failureAlertAfter 2m)", time.Since(faults).Round(time.Second))
	want, timeout := "pending", 3*time.Minute
	if os.Getenv(longRunEnv) == "1" {
		want, timeout = "firing", 9*time.Minute
	}
	WaitFor(t, timeout, "CNMReplicationStopped "+want, func() (bool, error) {
		state, err := prom.alertState("CNMReplicationStopped", ns)
		return state == want, fmt.Errorf("state %q, %v", state, err)
	})
	t.Logf("CNMReplicationStopped %s %s after the applier stopped", want, time.Since(faults).Round(time.Second))

	// The drift repaired, the store back: then a failover, which Prometheus counts.
	sql(replica, "SET SESSION sql_log_bin = 0; SET GLOBAL super_read_only = OFF; DELETE FROM e2e.t WHERE id = 100; SET GLOBAL super_read_only = ON")
	store.start()
	prom.waitQuery(t, 3*time.Minute, "the repaired replica replicating again",
		`cnm_replication_sql_running{namespace="`+ns+`",pod="`+replica+`"} == 1`, nil)
	before := prom.waitQuery(t, time.Minute, "the failover counter", `cnm_failovers_total`+sel, nil).value()
	var pod corev1.Pod
	if err := env.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: primary}, &pod); err != nil {
		t.Fatal(err)
	}
	DeletePod(t, ns, primary, *pod.Spec.TerminationGracePeriodSeconds) // its shutdown runs, as in TestAutomaticFailoverByPodDeletion
	prom.waitQuery(t, 5*time.Minute, "the failover counted", `cnm_failovers_total`+sel,
		func(s promSample) bool { return s.value() >= before+1 })
	prom.waitQuery(t, time.Minute, "its duration observed", `cnm_failover_duration_seconds_count`+sel,
		func(s promSample) bool { return s.value() >= 1 })
	prom.waitQuery(t, 3*time.Minute, "one writable instance after the failover", `cnm:cluster_writable_instances:sum`+sel,
		func(s promSample) bool { return s.value() == 1 })

	checkMetricsScraped(t, prom)
	checkDashboardQueries(t, prom, ns)
}

// absentWithoutTheirEvent are metrics a rule or the dashboard reads that this test's Cluster
// never produces: each needs an event the test does not cause.
var absentWithoutTheirEvent = map[string]string{
	"cnm_operator_undecodable_objects_total": "an object the operator cannot decode (TestUndecodableObjects covers it)",
}

// checkMetricsScraped: every metric the shipped rules and the dashboard read is in the scrape.
func checkMetricsScraped(t *testing.T, prom *nodePrometheus) {
	t.Helper()
	parser, err := promqlnames.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exprs := append(ruleExprs(t), dashboardExprs(t, ".*", ".*")...)
	results, err := parser.Parse(context.Background(), exprs)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	names := promqlnames.Names(results...)
	for _, name := range names {
		if strings.Contains(name, ":") || name == "ALERTS" || absentWithoutTheirEvent[name] != "" {
			continue // a recording rule's output, or excused above
		}
		got, err := prom.query(`count({__name__="` + name + `"})`)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(got) == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("metrics read by a rule or the dashboard but absent from the real scrape: %s", strings.Join(missing, ", "))
	}
	t.Logf("%d metrics read by the rules and the dashboard checked against the scrape", len(names))
}

// checkDashboardQueries evaluates every dashboard query for this Cluster: none may fail, and each
// returns data unless every metric it reads is excused.
func checkDashboardQueries(t *testing.T, prom *nodePrometheus, ns string) {
	t.Helper()
	queries := dashboardQueries(t)
	empty := 0
	for _, q := range queries {
		expr := monitoring.Expand(q.Expr, ns, "db")
		got, err := prom.query(expr)
		if err != nil {
			t.Errorf("%s / %s: %v", q.Row, q.Panel, err)
			continue
		}
		if len(got) == 0 && !excused(expr) {
			empty++
			t.Errorf("%s / %s (%s) returned no data on the real scrape", q.Row, q.Panel, expr)
		}
	}
	t.Logf("%d dashboard queries evaluated on the real Prometheus, %d without data", len(queries), empty)
}

// excused reports whether expr reads only metrics absentWithoutTheirEvent excuses.
func excused(expr string) bool {
	for name := range absentWithoutTheirEvent {
		if strings.Contains(expr, name) {
			return true
		}
	}
	return false
}

// dashboardQueries are the queries of the generated dashboard.
func dashboardQueries(t *testing.T) []monitoring.Query {
	t.Helper()
	d, err := monitoring.LoadDashboard(monitoring.DashboardPath())
	if err != nil {
		t.Fatal(err)
	}
	queries, err := monitoring.Queries(d)
	if err != nil {
		t.Fatal(err)
	}
	return queries
}

// dashboardExprs are the dashboard's queries made PromQL for the namespace and cluster patterns.
func dashboardExprs(t *testing.T, namespace, cluster string) []string {
	t.Helper()
	var out []string
	for _, q := range dashboardQueries(t) {
		out = append(out, monitoring.Expand(q.Expr, namespace, cluster))
	}
	return out
}

// ruleExprs are the expressions of the shipped rules.
func ruleExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(env.root, "config/monitoring/rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Expr string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if !slices.Contains(out, r.Expr) {
				out = append(out, r.Expr)
			}
		}
	}
	return out
}
