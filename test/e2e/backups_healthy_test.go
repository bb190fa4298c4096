//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// The two levels of backup failure on the local node, with a real backup Job and a real object
// store that stops answering: a Backup failing while the store is down turns BackupsHealthy False
// with LastBackupFailed and a Warning; once no backup has succeeded for failureAlertAfter (2m) it
// is NoSuccessfulBackup, the critical level; with the store back, a Backup completes and the
// Cluster is protected again, its status showing the backup and what its location holds.
func TestBackupsHealthyLevelsOnTheNode(t *testing.T) {
	store := startNodeStore(t)
	ns := Namespace(t)
	storeSecret, objectStore := store.manifests()
	Apply(t, ns, storeSecret+"---"+storeCluster(objectStore, "\n    failureAlertAfter: 2m"))
	c := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, c, "Ready", 5*time.Minute, func() []metav1.Condition { return c.Status.Conditions })
	waitCluster(t, c, time.Minute, "the location claimed", func(c *mysqlv1.Cluster) bool { return c.HoldsObjectStoreLocation() })

	store.stop()
	t0 := time.Now()
	createBackup(t, ns, "while-down")
	waitHealthy(t, c, 2*time.Minute, metav1.ConditionFalse, "LastBackupFailed")
	t.Logf("LastBackupFailed %s after the failing Backup was created", time.Since(t0).Round(time.Second))
	WarningEvent(t, ns, "db", "LastBackupFailed", "while-down", 30*time.Second)
	waitHealthy(t, c, 3*time.Minute, metav1.ConditionFalse, "NoSuccessfulBackup")
	if cond := meta.FindStatusCondition(c.Status.Conditions, mysqlv1.ConditionBackupsHealthy); !strings.Contains(cond.Message, "while-down") {
		t.Errorf("the critical message does not name the failing Backup: %q", cond.Message)
	}
	WarningEvent(t, ns, "db", "NoSuccessfulBackup", "critical", 30*time.Second)
	t.Logf("NoSuccessfulBackup %s after the Cluster's creation", time.Since(c.CreationTimestamp.Time).Round(time.Second))

	store.start()
	takeBackup(t, ns, "db", "healed")
	waitHealthy(t, c, 2*time.Minute, metav1.ConditionTrue, "LastBackupSucceeded")
	waitCluster(t, c, time.Minute, "status.backups lists the location", func(c *mysqlv1.Cluster) bool {
		st := c.Status.Backups
		return st != nil && st.LastSuccessful != nil && st.LastSuccessful.Name == "healed" && st.LastFailed != nil &&
			st.LastFailed.Name == "while-down" && st.Restorable == 1 && st.RestorableBytes > 0
	})
}

// createBackup creates an on-demand Backup of Cluster db.
func createBackup(t *testing.T, ns, name string) {
	t.Helper()
	if err := env.c.Create(context.Background(), &mysqlv1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: mysqlv1.BackupSpec{Cluster: mysqlv1.LocalObjectReference{Name: "db"}}}); err != nil {
		t.Fatal(err)
	}
}

// waitHealthy waits until the Cluster's BackupsHealthy has status and reason.
func waitHealthy(t *testing.T, c *mysqlv1.Cluster, timeout time.Duration, status metav1.ConditionStatus, reason string) {
	t.Helper()
	WaitFor(t, timeout, "BackupsHealthy "+string(status)+" "+reason, func() (bool, error) {
		if err := env.c.Get(context.Background(), client.ObjectKeyFromObject(c), c); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(c.Status.Conditions, mysqlv1.ConditionBackupsHealthy)
		return cond != nil && cond.Status == status && cond.Reason == reason, fmt.Errorf("BackupsHealthy %+v", cond)
	})
}
