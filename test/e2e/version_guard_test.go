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

// Only one MySQL version (9.7) can be installed on the local node, so a real downgrade cannot be
// run here. The fault stands in for one: the data directory of a replica is made to record that
// a later release (9.8.0) last ran on it, as mysqld itself records it in mysql_upgrade_history,
// and the replica's Pod is deleted. Its manager must refuse to start mysqld (a downgrade across
// series), the Cluster must say so in Degraded with the manager's message and a Warning, and the
// primary must keep serving.
func TestInstanceRefusesAnUnsupportedDowngrade(t *testing.T) {
	ctx := context.Background()
	ns := Namespace(t)
	Apply(t, ns, `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: db}
spec:
  instances: 2
  imageName: `+mysqlImage+`
  storage: {size: 1Gi}
`)
	cl := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, cl, "Ready", 10*time.Minute, func() []metav1.Condition { return cl.Status.Conditions })
	replica := "db-2"
	if cl.Status.CurrentPrimary == replica {
		replica = "db-1"
	}
	const history = "/var/lib/mysql/data/mysql_upgrade_history"
	out, stderr, err := Exec(ns, replica, "mysql", "sh", "-c",
		`sed -i 's/"version":"[^"]*"/"version":"9.8.0"/g' `+history+` && cat `+history)
	if err != nil || !strings.Contains(out, `"version":"9.8.0"`) {
		t.Fatalf("recording 9.8.0 in %s of %s: %v\n%s%s", history, replica, err, out, stderr)
	}
	t.Logf("%s now records: %s", replica, strings.TrimSpace(out))
	DeletePod(t, ns, replica, 30)

	WaitFor(t, 3*time.Minute, "Degraded=True ServerVersionRefused naming "+replica, func() (bool, error) {
		if err := env.c.Get(ctx, client.ObjectKeyFromObject(cl), cl); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(cl.Status.Conditions, "Degraded")
		if c != nil && c.Status == metav1.ConditionTrue && c.Reason == "ServerVersionRefused" &&
			strings.Contains(c.Message, replica+": refusing to start mysqld: the data directory was last used by MySQL 9.8.0") &&
			strings.Contains(c.Message, "does not support downgrading across release series") {
			t.Logf("Degraded: %s", c.Message)
			return true, nil
		}
		return false, fmt.Errorf("Degraded: %+v", c)
	})
	WarningEvent(t, ns, "", "Degraded", "refusing to start mysqld", time.Minute)
	// mysqld never started on the refused data directory: the container's log has the refusal
	// and no mysqld start.
	// The container may be in its first termination or restarted since (back-off): read both.
	logs, _ := Logs(ns, replica, "mysql", false)
	if previous, err := Logs(ns, replica, "mysql", true); err == nil {
		logs = previous + logs
	}
	if !strings.Contains(logs, "server version refused") || strings.Contains(logs, "ready for connections") {
		t.Errorf("the refused container's log should hold the refusal and no mysqld start:\n%s", tail(logs, 20))
	}
	if err := env.c.Get(ctx, client.ObjectKeyFromObject(cl), cl); err != nil {
		t.Fatal(err)
	}
	if cl.Status.CurrentPrimary == replica || cl.Status.CurrentPrimary == "" {
		t.Errorf("the primary should stay where it was: %q", cl.Status.CurrentPrimary)
	}
}
