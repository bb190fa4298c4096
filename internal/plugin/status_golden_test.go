package plugin_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/status/*.golden from the current output")

const (
	uuidA = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	uuidB = "4e11fa47-71ca-11e1-9e33-c80aa9429562"
)

// TestStatusGolden renders `status` of Clusters as the operator leaves them, in several states, as
// a table, JSON and YAML, against files under testdata/status (-update-golden rewrites them). The
// namespace, random per test, is written NAMESPACE.
func TestStatusGolden(t *testing.T) {
	at := func(d time.Duration) *metav1.Time { m := metav1.NewTime(testNow.Add(d)); return &m }
	cond := func(typ string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg, LastTransitionTime: *at(-time.Hour)}
	}
	channel := func(lag, trx int64) v1.InstanceReplicationStatus {
		return v1.InstanceReplicationStatus{Source: "db-1", IOState: "Yes", IORunning: true, SQLRunning: true, LagSeconds: &lag, LagTransactions: &trx}
	}
	healthy := func(c *v1.Cluster) {
		c.Status.ObservedGeneration = c.Generation
		c.Status.CurrentPrimaryTimestamp = at(-48 * time.Hour)
		c.Status.InstanceReplication = map[string]v1.InstanceReplicationStatus{"db-2": channel(0, 0), "db-3": channel(1, 0)}
		c.Status.FailoverReadiness = &v1.FailoverReadiness{Safe: true, Reason: "CandidateReady", Candidate: "db-2",
			Message: "a failover would promote db-2, the replica with the most complete history", LastTransitionTime: at(-47 * time.Hour)}
		c.Status.GTIDExecutedByInstance = map[string]string{"db-1": uuidA + ":1-100", "db-2": uuidA + ":1-100", "db-3": uuidA + ":1-100"}
		c.Status.SemiSync = &v1.SemiSyncStatus{Active: true, WaitForReplicaCount: 1, Clients: 2, LastTransitionTime: at(-48 * time.Hour)}
		c.Status.BinlogArchive = &v1.BinlogArchiveStatus{Instance: "db-1", LagSeconds: 2, LastArchivedTime: &metav1.MicroTime{Time: testNow.Add(-2 * time.Second)}}
		c.Status.Backups = &v1.BackupsStatus{LastSuccessful: &v1.SuccessfulBackupRecord{Name: "nightly-1", CompletedAt: at(-6 * time.Hour), Size: 1 << 20},
			Restorable: 3, RestorableBytes: 3 << 20, ListedAt: at(-time.Minute)}
		c.Status.LastVerifiedBackup = &v1.LastVerifiedBackup{Name: "nightly-1", JobName: "nightly-1-verify-a1b2c3", Passed: true,
			Reason: v1.ReasonVerificationPassed, CompletedAt: at(-5 * time.Hour), LastPassedAt: at(-5 * time.Hour)}
		c.Status.Conditions = []metav1.Condition{cond("Ready", metav1.ConditionTrue, "ClusterReady", "All 3 instances are ready and db-1 is the primary"),
			cond("Degraded", metav1.ConditionFalse, "Healthy", "nothing is degraded"),
			cond(v1.ConditionBackupsHealthy, metav1.ConditionTrue, "LastBackupSucceeded", "nightly-1 completed")}
	}
	for _, tc := range []struct {
		name  string
		state func(*v1.Cluster)
		lease time.Duration // since the Lease's last renewal
	}{
		{"healthy", healthy, 3 * time.Second},
		{"failover-under-way", func(c *v1.Cluster) {
			healthy(c)
			c.Status.TargetPrimary, c.Status.TargetPrimaryTimestamp = "db-2", at(-5*time.Second)
			c.Status.PrimaryFailingSince, c.Status.FailingPrimary = at(-20*time.Second), "db-1"
			c.Status.Conditions[0] = cond("Ready", metav1.ConditionFalse, "Failover", "failing over from db-1 to db-2")
			// db-1 no longer answers; its replicas' receivers were stopped by the failover.
			for _, name := range []string{"db-2", "db-3"} {
				ch := channel(0, 0)
				ch.IOState, ch.IORunning, ch.LagSeconds = "No", false, nil
				ch.LastIOError = "error reconnecting to source 'repl@db-1.db-i.NAMESPACE.svc:3306' - retry-time: 1 retries: 3 message: Can't connect to MySQL server (111)"
				c.Status.InstanceReplication[name] = ch
			}
			c.Status.FailoverReadiness = &v1.FailoverReadiness{Reason: "PrimaryChangeUnderWay", Candidate: "db-2",
				Message: "a primary change from db-1 to db-2 is under way", LastTransitionTime: at(-5 * time.Second)}
		}, 40 * time.Second},
		{"fenced", func(c *v1.Cluster) {
			healthy(c)
			c.Annotations = map[string]string{v1.FencedInstancesAnnotation: `["db-3"]`}
			c.Status.FencedInstances = []string{"db-3"}
		}, 3 * time.Second},
		{"diverged", func(c *v1.Cluster) {
			healthy(c)
			c.Status.GTIDExecutedByInstance["db-3"] = uuidA + ":1-97," + uuidB + ":1-2"
			c.Status.DivergedInstances = []string{"db-3"}
			// Kept read-only and out of service, its channel stopped by its instance manager.
			c.Status.InstanceReplication["db-3"] = v1.InstanceReplicationStatus{Source: "db-1", IOState: "No",
				LastSQLError: "Worker 1 failed executing transaction '4e11fa47-71ca-11e1-9e33-c80aa9429562:2'; Duplicate entry '7' for key 't.PRIMARY'"}
			c.Status.Conditions[1] = cond("Degraded", metav1.ConditionTrue, "DivergedInstances", "db-3 holds transactions the primary does not have")
		}, 3 * time.Second},
		{"backups-failing", func(c *v1.Cluster) {
			healthy(c)
			c.Status.Backups.LastFailed = &v1.FailedBackupRecord{Name: "nightly-2", At: at(-30 * time.Minute), Reason: "uploading: 503 Slow Down"}
			c.Status.LastVerifiedBackup = &v1.LastVerifiedBackup{Name: "nightly-1", JobName: "nightly-1-verify-d4e5f6", Reason: v1.ReasonVerificationTable,
				CompletedAt: at(-20 * time.Minute), LastPassedAt: at(-30 * time.Hour)}
			c.Status.Conditions[2] = cond(v1.ConditionBackupsHealthy, metav1.ConditionFalse, "NoSuccessfulBackup",
				"no backup has succeeded for 26h0m0s (failureAlertAfter): the last, nightly-2, failed: uploading: 503 Slow Down")
		}, 3 * time.Second},
		{"semisync-fallen-back", func(c *v1.Cluster) {
			healthy(c)
			c.Status.SemiSync = &v1.SemiSyncStatus{Active: false, FallenBack: true, WaitForReplicaCount: 1, Clients: 0, WaitingCommits: 0,
				LastTransitionTime: at(-3 * time.Minute)}
			c.Status.GTIDExecutedByInstance["db-1"] = uuidA + ":1-130"
			c.Status.InstanceReplication["db-2"], c.Status.InstanceReplication["db-3"] = channel(95, 30), channel(95, 30)
			c.Status.FailoverReadiness = &v1.FailoverReadiness{Reason: "SemiSyncFallback", Candidate: "db-2",
				Message: "db-1 fell back to asynchronous replication at 2026-11-22T07:57:00Z: the commits it acknowledged after " + uuidA +
					":1-100 may exist on it alone (db-2 has " + uuidA + ":1-100); a failover would be blocked until db-1 comes back or a person accepts the loss",
				LastTransitionTime: at(-3 * time.Minute)}
			c.Status.Conditions[1] = cond("Degraded", metav1.ConditionTrue, "SemiSyncFallenBackToAsync",
				"semi-sync on db-1 has fallen back to asynchronous replication: writes it acknowledges may exist on it alone")
		}, 3 * time.Second},
		{"update-pending", func(c *v1.Cluster) {
			healthy(c)
			c.Status.PendingUpdates = []v1.PendingUpdate{{Kind: v1.PendingPodSpec, Instances: []string{"db-2", "db-1"}},
				{Kind: v1.PendingParameterRestart, Instances: []string{"db-1"}, Detail: "innodb_log_buffer_size"},
				{Kind: v1.PendingInstanceManager, Instances: []string{"db-3", "db-2", "db-1"}, Detail: "to 0.4.0"}}
			c.Status.Conditions = append(c.Status.Conditions, cond(v1.ConditionProgressing, metav1.ConditionTrue, "RollingUpdate", "replacing db-3"))
		}, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.newCluster(t, 3, tc.state)
			check.Must(t, w.env.Client.Create(context.Background(), &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "db-primary", Namespace: w.ns},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("db-1"), LeaseDurationSeconds: ptr.To[int32](15),
					RenewTime: &metav1.MicroTime{Time: testNow.Add(-tc.lease)}}}))
			for _, p := range []string{"db-1", "db-2", "db-3"} {
				w.setPodState(t, p, p == "db-1")
			}
			check.Must(t, w.env.Client.Create(context.Background(), &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: "ev-" + tc.name, Namespace: w.ns},
				InvolvedObject: corev1.ObjectReference{Kind: "Cluster", Name: "db", Namespace: w.ns},
				Type:           corev1.EventTypeNormal, Reason: "ClusterReady", Message: "All 3 instances are ready",
				LastTimestamp: *at(-10 * time.Minute)}))
			for _, format := range []struct{ ext, flag string }{{"txt", ""}, {"json", "json"}, {"yaml", "yaml"}} {
				args := []string{"status", "db"}
				if format.flag != "" {
					args = append(args, "-o", format.flag)
				}
				got := strings.ReplaceAll(w.mustRun(t, args...), w.ns, "NAMESPACE")
				golden(t, filepath.Join("testdata", "status", tc.name+"."+format.ext+".golden"), got)
			}
		})
	}
}

// setPodState makes a Pod ready, labelled with its role, as the kubelet and operator leave it.
func (w *world) setPodState(t *testing.T, name string, primary bool) {
	t.Helper()
	ctx := context.Background()
	var p corev1.Pod
	check.Must(t, w.env.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, &p))
	role := v1.RoleReplica
	if primary {
		role = v1.RolePrimary
	}
	p.Labels[v1.RoleLabel] = role
	check.Must(t, w.env.Client.Update(ctx, &p))
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mysql", RestartCount: 1}}
	check.Must(t, w.env.Client.Status().Update(ctx, &p))
}

// golden compares got with the file, or rewrites the file with -update-golden.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *updateGolden {
		check.Must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		check.Must(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-golden to write it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs:\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
