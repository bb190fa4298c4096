//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// A ScheduledBackup whose Backups reach the object store from the Pod: its immediate Backup runs
// a real Job that writes the archive and metadata.json to the store on the node, and the
// Cluster's protection status names it, with what the location holds and the next slot.
func TestScheduledBackupReachesTheStore(t *testing.T) {
	storeSecret, store := storeManifests(t)
	ns := Namespace(t)
	Apply(t, ns, storeSecret+"---"+storeCluster(store, "")+`---
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: ScheduledBackup
metadata: {name: hourly}
spec:
  schedule: "0 0 * * * *"
  cluster: {name: db}
  immediate: true
`)
	c := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, c, "Ready", 5*time.Minute, func() []metav1.Condition { return c.Status.Conditions })
	done := waitScheduledBackup(t, ns, "hourly")
	if !strings.HasPrefix(done.Status.DestinationPath, "db/"+done.Name+"/") || done.Status.Size == 0 {
		t.Errorf("the Backup recorded %q, %d bytes", done.Status.DestinationPath, done.Status.Size)
	}
	waitCluster(t, c, 2*time.Minute, "the protection status names the scheduled backup", func(c *mysqlv1.Cluster) bool {
		st := c.Status.Backups
		return st != nil && st.LastSuccessful != nil && st.LastSuccessful.Name == done.Name && st.Restorable >= 1 && st.NextScheduled != nil
	})
}
