//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
)

// runPlugin runs `kubectl cloudnative-mysql args...` in namespace ns with stdin, and returns what
// it printed.
func runPlugin(ns, stdin string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := plugin.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &out}, clock.RealClock{})
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(append([]string{"--kubeconfig", env.kubeconfig, "-n", ns}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// The plugin's daily verbs against a two-instance Cluster on the local node: mysql writes on the
// primary and reads on a replica (the password on stdin only), status shows both instances with
// no missing transaction, logs prints the instances' lines prefixed, and schedule unpause
// --skip-immediately resumes a paused schedule whose due run the operator then skips.
func TestPluginVerbsOnTheNode(t *testing.T) {
	storeSecret, store := storeManifests(t)
	ns := Namespace(t)
	Apply(t, ns, storeSecret+`---
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: db}
spec:
  instances: 2
  imageName: `+mysqlImage+`
  storage: {size: 1Gi}
  backup:
    objectStore:`+store+`
---
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: ScheduledBackup
metadata: {name: nightly}
spec:
  schedule: "0 0 3 * * *"
  cluster: {name: db}
  immediate: true
  suspend: true
`)
	c := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, c, "Ready", 6*time.Minute, func() []metav1.Condition { return c.Status.Conditions })

	out, err := runPlugin(ns, "", "mysql", "db", "--", "-N", "-B", "-e",
		"CREATE DATABASE e2e; CREATE TABLE e2e.t (id INT PRIMARY KEY); INSERT INTO e2e.t VALUES (1), (2)")
	if err != nil {
		t.Fatalf("mysql on the primary: %v\n%s", err, out)
	}
	WaitFor(t, time.Minute, "mysql --replica reads the rows, read-only", func() (bool, error) {
		out, err := runPlugin(ns, "SELECT @@read_only, COUNT(*) FROM e2e.t;\n", "mysql", "db", "--replica", "--", "-N", "-B")
		return err == nil && strings.TrimSpace(out) == "1\t2", fmt.Errorf("%q, %v", out, err)
	})

	WaitFor(t, time.Minute, "status shows the replica caught up, its threads running, and a failover safe", func() (bool, error) {
		out, err := runPlugin(ns, "", "status", "db")
		fields := strings.Join(strings.Fields(out), " ")
		return err == nil && strings.Contains(fields, "db-1 primary true no no - - - - -") &&
			strings.Contains(fields, "db-2 replica true no no 0 0 0s 0 Yes/Yes") &&
			strings.Contains(fields, "Failover safe now: yes"), fmt.Errorf("%v:\n%s", err, out)
	})
	out, err = runPlugin(ns, "", "logs", "db", "db-2", "--tail", "5")
	if err != nil || strings.Count(out, "[db-2] ") != 5 {
		t.Errorf("logs: %v\n%s", err, out)
	}

	if out, err := runPlugin(ns, "", "schedule", "unpause", "nightly", "--skip-immediately"); err != nil {
		t.Fatalf("schedule unpause: %v\n%s", err, out)
	}
	var sb mysqlv1.ScheduledBackup
	WaitFor(t, time.Minute, "the operator skips the due run and consumes skipImmediately", func() (bool, error) {
		if err := env.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nightly"}, &sb); err != nil {
			return false, err
		}
		s := sb.Spec.SkipImmediately
		return !sb.IsSuspended() && s != nil && !*s && sb.Status.LastSkipped != nil, fmt.Errorf("spec %+v status %+v", sb.Spec, sb.Status)
	})
	var backups mysqlv1.BackupList
	if err := env.c.List(context.Background(), &backups, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(backups.Items) != 0 {
		t.Errorf("%d Backups: the immediate run was not skipped", len(backups.Items))
	}
	list, err := runPlugin(ns, "", "schedule", "list", "db")
	fields := strings.Fields(strings.Split(strings.TrimSpace(list), "\n")[1])
	// NAME CLUSTER SCHEDULE(6 fields) PAUSED NEXT(3) LAST LAST-SKIPPED(3) SKIP-IMMEDIATELY
	if err != nil || fields[0] != "nightly" || fields[8] != "false" || fields[len(fields)-1] != "false" {
		t.Errorf("schedule list (paused false, skipImmediately false): %v\n%s", err, list)
	}
	t.Logf("schedule list:\n%s", list)
}
