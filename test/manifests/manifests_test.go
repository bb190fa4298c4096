package manifests_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

type kubectl struct {
	t          *testing.T
	bin        string
	kubeconfig string
}

func (k kubectl) run(args ...string) (string, error) {
	k.t.Helper()
	cmd := exec.Command(k.bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Dir = kubetest.RepoRoot()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (k kubectl) must(args ...string) string {
	k.t.Helper()
	out, err := k.run(args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func TestInstallFromConfigAndApplySamples(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	assets, err := kubetest.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	k := kubectl{t: t, bin: filepath.Join(assets, "kubectl"), kubeconfig: env.KubeconfigFile(t)}

	k.must("apply", "--server-side", "--force-conflicts", "-k", "config/default")
	var dep appsv1.Deployment
	key := client.ObjectKey{Namespace: "cloudnative-mysql-system", Name: "cloudnative-mysql-manager"}
	if err := env.Client.Get(context.Background(), key, &dep); err != nil {
		t.Fatalf("the manager Deployment was not installed: %v", err)
	}
	if got := dep.Spec.Template.Spec.Containers[0].Command; strings.Join(got, " ") != "/manager controller" {
		t.Errorf("the manager runs %v, want /manager controller", got)
	}

	// The operator's ServiceAccount may do what the operator needs, and no more than its role says.
	sa := "--as=system:serviceaccount:cloudnative-mysql-system:cloudnative-mysql-manager"
	for _, verbResource := range [][2]string{
		{"create", "leases.coordination.k8s.io"}, {"patch", "scheduledbackups.mysql.cloudnative-mysql.io/status"},
		{"create", "backups.mysql.cloudnative-mysql.io"}, {"create", "jobs.batch"}, {"create", "events"},
		{"create", "pods"}, {"create", "services"}, {"create", "secrets"},
	} {
		if out := k.must("auth", "can-i", sa, "-n", "default", verbResource[0], verbResource[1]); strings.TrimSpace(out) != "yes" {
			t.Errorf("the operator cannot %s %s: %s", verbResource[0], verbResource[1], out)
		}
	}
	if out, _ := k.run("auth", "can-i", sa, "delete", "nodes"); !strings.HasSuffix(strings.TrimSpace(out), "no") {
		t.Errorf("the operator may delete nodes: %s", out)
	}

	ns := env.NewNamespace(t)
	k.must("apply", "--server-side", "-n", ns, "-k", "config/samples")
	var c v1.Cluster
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cluster-sample"}, &c); err != nil {
		t.Fatalf("the sample Cluster was not created: %v", err)
	}
	if c.Spec.Instances != 3 || c.Spec.Backup == nil || c.Spec.Backup.RetentionPolicy != "30d" {
		t.Errorf("unexpected sample Cluster spec: %+v", c.Spec)
	}
	for _, name := range []string{"scheduledbackup/cluster-sample-daily", "backup/cluster-sample-on-demand", "secret/backup-store"} {
		k.must("get", "-n", ns, name)
	}
}
