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

// A Cluster deleted and created again with the same name is a new incarnation; it must neither
// inherit nor mix with the old one's backups and binlog archive. The first Cluster claims its
// location, backs up and archives there. The second finds the old marker: Degraded with
// ObjectStoreInUse, its primary's archiver refusing (ObjectStoreNotHeld), no recoverable window
// of the old incarnation shown, a Backup failing at once; given spec.backup.serverName it claims
// a location of its own, archives, backs up, and is no longer Degraded.
func TestRecreatedClusterDoesNotInheritItsLocation(t *testing.T) {
	storeSecret, store := storeManifests(t)
	ns := Namespace(t)
	manifest := func(serverName string) string {
		extra := ""
		if serverName != "" {
			extra = "\n    serverName: " + serverName
		}
		return storeSecret + "---" + storeCluster(store, extra)
	}
	Apply(t, ns, manifest(""))
	first := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, first, "Ready", 5*time.Minute, func() []metav1.Condition { return first.Status.Conditions })
	takeBackup(t, ns, "db", "first")
	waitCluster(t, first, 2*time.Minute, "the first incarnation holds its location and reports its archive window", func(c *mysqlv1.Cluster) bool {
		return c.HoldsObjectStoreLocation() && c.Status.BinlogArchive != nil && c.Status.BinlogArchive.RecoverableTo != nil
	})
	oldUID := string(first.UID)

	if err := env.c.Delete(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 3*time.Minute, "the first incarnation and its Pods gone", func() (bool, error) {
		err := env.c.Get(context.Background(), client.ObjectKeyFromObject(first), &mysqlv1.Cluster{})
		if err == nil {
			return false, fmt.Errorf("the Cluster still exists")
		}
		out, _ := kubectl("-n", ns, "get", "pods,pvc", "-o", "name")
		for _, left := range strings.Fields(out) {
			if left == "pod/db-1" || left == "persistentvolumeclaim/db-1" {
				return false, fmt.Errorf("left: %s", out)
			}
		}
		return true, nil
	})

	Apply(t, ns, manifest(""))
	second := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, second, "Ready", 5*time.Minute, func() []metav1.Condition { return second.Status.Conditions })
	waitCluster(t, second, 2*time.Minute, "Degraded ObjectStoreInUse and the archiver refusing", func(c *mysqlv1.Cluster) bool {
		deg := meta.FindStatusCondition(c.Status.Conditions, "Degraded")
		arch := meta.FindStatusCondition(c.Status.Conditions, "BinlogArchiving")
		return deg != nil && deg.Status == metav1.ConditionTrue && deg.Reason == "ObjectStoreInUse" &&
			arch != nil && arch.Status == metav1.ConditionFalse && arch.Reason == "ObjectStoreNotHeld"
	})
	st := second.Status.ObjectStoreLocation
	if st == nil || st.Phase != mysqlv1.LocationInUse || st.HolderUID != oldUID || !strings.Contains(st.Message, "spec.backup.serverName") {
		t.Fatalf("status.objectStoreLocation %+v, want InUse by the old incarnation %s, naming the choices", st, oldUID)
	}
	if second.Status.BinlogArchive != nil {
		t.Errorf("the new incarnation shows an archive: %+v", second.Status.BinlogArchive)
	}
	WarningEvent(t, ns, "db", "ObjectStoreInUse", oldUID, 30*time.Second)
	refused := &mysqlv1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refused"},
		Spec: mysqlv1.BackupSpec{Cluster: mysqlv1.LocalObjectReference{Name: "db"}}}
	if err := env.c.Create(context.Background(), refused); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 30*time.Second, "the Backup refused", func() (bool, error) {
		if err := env.c.Get(context.Background(), client.ObjectKeyFromObject(refused), refused); err != nil {
			return false, err
		}
		return refused.Status.Phase == mysqlv1.BackupPhaseFailed && strings.Contains(refused.Status.Error, "does not hold its object store location"),
			fmt.Errorf("phase %q: %s", refused.Status.Phase, refused.Status.Error)
	})

	Apply(t, ns, manifest("db-v2"))
	// A transaction for the archiver to archive into the new location.
	rootSQL(t, ns, "db")("db-1", "CREATE DATABASE IF NOT EXISTS e2e; CREATE TABLE IF NOT EXISTS e2e.t (id INT PRIMARY KEY); INSERT INTO e2e.t VALUES (1)")
	waitCluster(t, second, 2*time.Minute, "the new location claimed, archived to, and Degraded cleared", func(c *mysqlv1.Cluster) bool {
		deg := meta.FindStatusCondition(c.Status.Conditions, "Degraded")
		arch := meta.FindStatusCondition(c.Status.Conditions, "BinlogArchiving")
		return c.HoldsObjectStoreLocation() && deg != nil && deg.Status == metav1.ConditionFalse &&
			arch != nil && arch.Status == metav1.ConditionTrue && c.Status.BinlogArchive != nil && c.Status.BinlogArchive.LastSegment != ""
	})
	b := takeBackup(t, ns, "db", "second")
	if !strings.Contains(b.Status.DestinationPath, "db-v2/second/") {
		t.Errorf("the backup went to %s, want under db-v2/", b.Status.DestinationPath)
	}
}

// waitCluster waits until cond holds for the Cluster, read into c.
func waitCluster(t *testing.T, c *mysqlv1.Cluster, timeout time.Duration, what string, cond func(*mysqlv1.Cluster) bool) {
	t.Helper()
	WaitFor(t, timeout, what, func() (bool, error) {
		if err := env.c.Get(context.Background(), client.ObjectKeyFromObject(c), c); err != nil {
			return false, err
		}
		return cond(c), fmt.Errorf("status.objectStoreLocation %+v, conditions %+v", c.Status.ObjectStoreLocation, c.Status.Conditions)
	})
}
