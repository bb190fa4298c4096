//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// A scheduled backup verified end to end on the local node: the schedule's immediate Backup
// completes, rows are written after it and archived, then verification is turned on; the
// verification Job restores the Backup from the store on the node into its scratch volume,
// replays the archive to its newest event, starts mysqld and checks every table. The Backup is
// Verified with its figures (gtid_executed the primary's, the rows written after it replayed),
// the Cluster records its last verification, and the Job is gone.
func TestScheduledBackupVerifiedOnTheNode(t *testing.T) {
	storeSecret, store := storeManifests(t)
	ns := Namespace(t)
	Apply(t, ns, storeSecret+"---"+storeCluster(store, "\n    archiveTimeout: 2s"))
	c := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, c, "Ready", 5*time.Minute, func() []metav1.Condition { return c.Status.Conditions })
	sql := rootSQL(t, ns, "db")
	sql("db-1", "CREATE DATABASE e2e; CREATE TABLE e2e.t (id INT PRIMARY KEY, v VARCHAR(64)); INSERT INTO e2e.t VALUES (1, 'a'), (2, 'b')")
	Apply(t, ns, `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: ScheduledBackup
metadata: {name: nightly}
spec:
  schedule: "0 0 3 * * *"
  cluster: {name: db}
  immediate: true
`)
	scheduled := waitScheduledBackup(t, ns, "nightly")
	wroteAt := time.Now().Add(-time.Second)
	sql("db-1", "INSERT INTO e2e.t VALUES (3, 'c'), (4, 'd'); UPDATE e2e.t SET v = 'z' WHERE id = 1")
	executed := sql("db-1", "SELECT @@GLOBAL.gtid_executed")
	waitCluster(t, c, 2*time.Minute, "the archive reaching the last write", func(c *mysqlv1.Cluster) bool {
		a := c.Status.BinlogArchive
		return a != nil && a.LastArchivedTime != nil && !a.LastArchivedTime.Time.Before(wroteAt)
	})

	patch := []byte(`{"spec":{"backup":{"verification":{"everyBackups":1,"checkTableBudget":"2m"}}}}`)
	if err := env.c.Patch(context.Background(), c, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	var b mysqlv1.Backup
	WaitFor(t, 5*time.Minute, "the scheduled Backup verified", func() (bool, error) {
		if err := env.c.Get(context.Background(), client.ObjectKeyFromObject(scheduled), &b); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(b.Status.Conditions, mysqlv1.BackupVerified)
		if cond != nil && cond.Status == metav1.ConditionFalse {
			t.Fatalf("the verification of %s failed: %s: %s", b.Name, cond.Reason, cond.Message)
		}
		return cond != nil, fmt.Errorf("Verified %+v", cond)
	})
	v := b.Status.Verification
	t.Logf("verified %s %s after verification was turned on: %s", b.Name, time.Since(t0).Round(time.Second),
		meta.FindStatusCondition(b.Status.Conditions, mysqlv1.BackupVerified).Message)
	if !v.Passed || v.Tables == 0 || v.TablesChecked != v.Tables || v.Rows < 4 {
		t.Errorf("verification status %+v", *v)
	}
	if v.GTIDExecuted != executed || v.ReplayedTransactions < 1 || v.ReplayedSegments < 1 {
		t.Errorf("verified gtid_executed %q after replaying %d transactions from %d segments; the primary executed %q",
			v.GTIDExecuted, v.ReplayedTransactions, v.ReplayedSegments, executed)
	}
	if b.Status.Phase != mysqlv1.BackupPhaseCompleted {
		t.Errorf("the verified Backup is %s", b.Status.Phase)
	}
	waitCluster(t, c, time.Minute, "the Cluster records its last verification", func(c *mysqlv1.Cluster) bool {
		l := c.Status.LastVerifiedBackup
		cond := meta.FindStatusCondition(c.Status.Conditions, mysqlv1.ClusterBackupsVerified)
		return l != nil && l.Name == b.Name && l.Passed && cond != nil && cond.Status == metav1.ConditionTrue
	})
	WaitFor(t, time.Minute, "the verification Job and its scratch are gone", func() (bool, error) {
		var jobs batchv1.JobList
		if err := env.c.List(context.Background(), &jobs, client.InNamespace(ns), client.HasLabels{mysqlv1.VerificationLabel}); err != nil {
			return false, err
		}
		return len(jobs.Items) == 0, fmt.Errorf("%d verification Jobs", len(jobs.Items))
	})
}

// waitScheduledBackup waits for the first Backup of ScheduledBackup schedule to complete; a
// failed one fails the test.
func waitScheduledBackup(t *testing.T, ns, schedule string) *mysqlv1.Backup {
	t.Helper()
	var done *mysqlv1.Backup
	WaitFor(t, 5*time.Minute, "the schedule's immediate Backup completed", func() (bool, error) {
		var list mysqlv1.BackupList
		if err := env.c.List(context.Background(), &list, client.InNamespace(ns),
			client.MatchingLabels{mysqlv1.ScheduledBackupLabel: schedule}); err != nil {
			return false, err
		}
		for i := range list.Items {
			b := &list.Items[i]
			if b.Status.Phase == mysqlv1.BackupPhaseFailed {
				t.Fatalf("the scheduled Backup failed: %s", b.Status.Error)
			}
			if b.Status.Phase == mysqlv1.BackupPhaseCompleted {
				done = b
				return true, nil
			}
		}
		return false, fmt.Errorf("%d Backups, none completed", len(list.Items))
	})
	return done
}
