package plugin_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// runAs executes the plugin with kubeconfig's credentials and its clock at now.
func (w *world) runAs(kubeconfig string, now time.Time, args ...string) (string, error) {
	out := &bytes.Buffer{}
	cmd := plugin.NewRootCommand(genericiooptions.IOStreams{Out: out, ErrOut: out}, clocktesting.NewFakePassiveClock(now))
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig, "-n", w.ns}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// grant binds user a Role of the world's namespace with rules.
func (w *world) grant(t *testing.T, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: w.ns}, Rules: rules}
	check.Must(t, w.env.Client.Create(ctx, role))
	check.Must(t, w.env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: w.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}))
}

func rule(group, resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs}
}

// TestVerbsSayWhichPermissionIsMissing runs the verbs as real API server users that lack one
// permission each: the error names the permission, the namespace, and how to check it.
func TestVerbsSayWhichPermissionIsMissing(t *testing.T) {
	w := newWorld(t)
	w.newCluster(t, 3, func(c *v1.Cluster) {
		c.Status.ObservedGeneration = c.Generation
		c.Status.GTIDExecutedByInstance = map[string]string{"db-1": uuidA + ":1-9", "db-2": uuidA + ":1-9"}
	})
	readCluster := rule(v1.GroupVersion.Group, "clusters", "get")
	getPods := rule("", "pods", "get")
	for i, tc := range []struct {
		name  string
		rules []rbacv1.PolicyRule
		args  []string
		want  string
	}{
		{"status without any right: get on clusters", nil, []string{"status", "db"},
			"needs get on clusters.mysql.cloudnative-mysql.io in namespace NS"},
		{"status without listing Pods: list on pods", []rbacv1.PolicyRule{readCluster}, []string{"status", "db"},
			"needs list on pods in namespace NS"},
		{"backup without creating Backups: create on backups", nil, []string{"backup", "db"},
			"needs create on backups.mysql.cloudnative-mysql.io in namespace NS"},
		{"promote without patching the status: patch on clusters/status", []rbacv1.PolicyRule{readCluster, getPods},
			[]string{"promote", "db", "db-2"}, "needs patch on clusters.mysql.cloudnative-mysql.io/status in namespace NS; ask an administrator " +
				"to grant it (kubectl auth can-i patch clusters.mysql.cloudnative-mysql.io --subresource=status -n NS checks it"},
		{"fence without patching the Cluster: patch on clusters", []rbacv1.PolicyRule{readCluster, getPods},
			[]string{"fence", "on", "db", "db-3"}, "needs patch on clusters.mysql.cloudnative-mysql.io in namespace NS"},
		{"fence without reading Pods: get on pods", []rbacv1.PolicyRule{readCluster},
			[]string{"fence", "on", "db", "db-3"}, "needs get on pods in namespace NS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user := "user-" + strconv.Itoa(i)
			kubeconfig := w.env.UserKubeconfigFile(t, user)
			if len(tc.rules) > 0 {
				w.grant(t, user, tc.rules...)
			}
			out, err := w.runAs(kubeconfig, testNow, tc.args...)
			want := strings.ReplaceAll(tc.want, "NS", w.ns)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "docs/plugin.md#permissions") ||
				!strings.Contains(err.Error(), "kubectl auth can-i") {
				t.Fatalf("%v: got %v (%s), want an error saying %q and how to check it", tc.args, err, out, want)
			}
		})
	}
}

// TestVerbsOnAMissingCluster: every verb that names a Cluster says there is none, and how to
// list them.
func TestVerbsOnAMissingCluster(t *testing.T) {
	w := newWorld(t)
	for _, args := range [][]string{{"status", "nosuch"}, {"backup", "nosuch"}, {"promote", "nosuch", "nosuch-2"},
		{"fence", "on", "nosuch", "nosuch-1"}} {
		out, err := w.run(args...)
		if err == nil || !strings.Contains(err.Error(), "cluster nosuch not found in namespace "+w.ns) ||
			!strings.Contains(err.Error(), "kubectl get clusters.mysql.cloudnative-mysql.io -A") {
			t.Errorf("%v: got %v (%s)", args, err, out)
		}
	}
	var backups v1.BackupList
	check.Must(t, w.env.Client.List(context.Background(), &backups, client.InNamespace(w.ns)))
	if len(backups.Items) != 0 {
		t.Errorf("a Backup of no Cluster was created: %v", backups.Items[0].Name)
	}
}

// TestOperatorAbsence: a Cluster whose status the operator never wrote, or wrote for an older
// spec, past OperatorGrace, gets a warning in status and after the verbs that wait for the
// operator; within the grace, none.
func TestOperatorAbsence(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	c := w.bareCluster("db", 1)
	check.Must(t, w.env.Client.Create(ctx, c))
	w.newPod(t, "db-1", "db")
	created := c.CreationTimestamp.Time
	late, early := created.Add(10*time.Minute), created.Add(30*time.Second)

	out, err := w.runAs(w.kubeconfig, late, "status", "db")
	if err != nil || !strings.Contains(out, "Warning: the operator seems not to be running: it has not written the status of Cluster db, created 10m0s ago") ||
		!strings.Contains(out, "kubectl get pods -A -l "+plugin.OperatorSelector) || !strings.Contains(out, "kubectl cloudnative-mysql logs --operator") {
		t.Fatalf("status of a Cluster the operator never saw: %v\n%s", err, out)
	}
	if out, err := w.runAs(w.kubeconfig, early, "status", "db"); err != nil || strings.Contains(out, "Warning") {
		t.Fatalf("within the grace: %v\n%s", err, out)
	}
	out, err = w.runAs(w.kubeconfig, late, "backup", "db")
	if err != nil || !strings.Contains(out, "created") || !strings.Contains(out, "Warning: the operator seems not to be running") ||
		!strings.Contains(out, "the request waits for it") {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	out, err = w.runAs(w.kubeconfig, late, "fence", "on", "db", "db-1")
	if err != nil || !strings.Contains(out, "Warning: the operator seems not to be running") {
		t.Fatalf("fence: %v\n%s", err, out)
	}

	// The operator wrote generation 1; the spec moved to 2 and nothing followed.
	w.update(t, func(c *v1.Cluster) {
		c.Status.ObservedGeneration, c.Status.CurrentPrimary, c.Status.TargetPrimary = c.Generation, "db-1", "db-1"
	})
	if out, err := w.runAs(w.kubeconfig, late, "status", "db"); err != nil || strings.Contains(out, "Warning") {
		t.Fatalf("a current status: %v\n%s", err, out)
	}
	w.update(t, func(c *v1.Cluster) { c.Spec.Instances = 2 })
	bumped := w.get(t)
	out, err = w.runAs(w.kubeconfig, time.Now().Add(5*time.Minute), "status", "db", "-o", "json")
	if err != nil || bumped.Generation != 2 ||
		!strings.Contains(out, "describes generation 1 of its spec, which is at generation 2 since") {
		t.Fatalf("a status behind the spec: %v\n%s", err, out)
	}
}
