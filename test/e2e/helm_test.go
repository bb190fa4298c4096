//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/helmtest"
)

const (
	chart   = "charts/cloudnative-mysql"
	release = "cnm"
)

// The Helm chart, cluster-wide, on the node: installed in place of config/default, it runs the
// operator, which makes a Cluster Ready; `helm upgrade` with a changed value rolls the operator
// with the new argument and the Cluster stays Ready; `helm uninstall` removes the operator and
// leaves the CRDs, the Cluster and its data PVCs.
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	replaceInstallWithHelm(t, "CustomResourceDefinition", "Namespace")
	helm(t, "install", release, chart, "--namespace", operatorNamespace, "--wait", "--timeout", "3m")
	if b := clusterRoleBindingManagedBy(t, "cloudnative-mysql-manager"); b != "Helm" {
		t.Errorf("the operator's ClusterRoleBinding is managed by %q, not Helm", b)
	}
	ns := Namespace(t)
	helmLifecycle(t, ns, nil)
}

// The chart's namespace-scoped mode on the node: a cluster administrator installs the CRDs (here
// those config/default left) and the admission policies (rendered by the chart, as docs/install.md
// says); the chart, with --skip-crds, binds the operator in the watched namespace only. A Cluster
// there becomes Ready, one in another namespace is left alone; upgrade and uninstall as
// cluster-wide, the data PVCs left.
func TestHelmNamespaceScopedInstall(t *testing.T) {
	replaceInstallWithHelm(t, "CustomResourceDefinition", "Namespace")
	policies := helm(t, "template", release, chart, "--namespace", operatorNamespace, "--show-only", "templates/admission-policies.yaml")
	cmd := exec.Command(env.kubectl, "--kubeconfig", env.kubeconfig, "apply", "--server-side", "-f", "-")
	cmd.Stdin = strings.NewReader(policies)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("installing the admission policies: %v\n%s", err, out)
	}
	ns, other := Namespace(t), Namespace(t)
	scope := []string{"--set", "namespaceScoped=true", "--set", "watchNamespaces={" + ns + "}"}
	helm(t, append([]string{"install", release, chart, "--namespace", operatorNamespace, "--skip-crds", "--wait", "--timeout", "3m"}, scope...)...)
	var crb rbacv1.ClusterRoleBinding
	if err := env.c.Get(context.Background(), client.ObjectKey{Name: "cloudnative-mysql-manager"}, &crb); !apierrors.IsNotFound(err) {
		t.Errorf("the namespace-scoped install binds the operator cluster-wide (%v)", err)
	}
	Apply(t, other, clusterManifest)
	helmLifecycle(t, ns, scope)
	var pvcs corev1.PersistentVolumeClaimList
	if err := env.c.List(context.Background(), &pvcs, client.InNamespace(other)); err != nil || len(pvcs.Items) != 0 {
		t.Errorf("the operator acted in the namespace it does not watch: %d PVCs (%v)", len(pvcs.Items), err)
	}
	var rb rbacv1.RoleBinding
	if err := env.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cloudnative-mysql-manager"}, &rb); !apierrors.IsNotFound(err) {
		t.Errorf("the watched namespace's RoleBinding outlived helm uninstall (%v)", err)
	}
}

const clusterManifest = `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: db}
spec:
  instances: 1
  imageName: ` + mysqlImage + `
  storage: {size: 1Gi}
`

// helmLifecycle creates a Cluster in ns under the installed release and waits for it Ready,
// upgrades the release with --zap-log-level=debug (keeping the values in scope) and checks the
// operator rolled with it and the Cluster is Ready again, then uninstalls the release and checks
// the operator is gone and the Cluster's data PVC is left.
func helmLifecycle(t *testing.T, ns string, scope []string) {
	t.Helper()
	ctx := context.Background()
	Apply(t, ns, clusterManifest)
	db := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, db, "Ready", 6*time.Minute, func() []metav1.Condition { return db.Status.Conditions })

	helm(t, append([]string{"upgrade", release, chart, "--namespace", operatorNamespace, "--skip-crds", "--wait", "--timeout", "3m",
		"--set", "operator.zapLogLevel=debug"}, scope...)...)
	d := DeploymentAvailable(t, operatorNamespace, operatorDeployment, 2*time.Minute)
	if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--zap-log-level=debug") {
		t.Errorf("the upgraded operator runs with %v", args)
	}
	if history := helm(t, "history", release, "--namespace", operatorNamespace, "-o", "yaml"); strings.Count(history, "revision:") != 2 {
		t.Errorf("helm history after one upgrade:\n%s", history)
	}
	ConditionTrue(t, db, "Ready", 3*time.Minute, func() []metav1.Condition { return db.Status.Conditions })

	var before corev1.PersistentVolumeClaimList
	if err := env.c.List(ctx, &before, client.InNamespace(ns), client.MatchingLabels{mysqlv1.ClusterLabel: "db"}); err != nil || len(before.Items) == 0 {
		t.Fatalf("the Cluster's data PVCs: %d (%v)", len(before.Items), err)
	}
	helm(t, "uninstall", release, "--namespace", operatorNamespace, "--wait", "--timeout", "3m")
	WaitFor(t, 2*time.Minute, "the operator's Deployment gone", func() (bool, error) {
		err := env.c.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: operatorDeployment}, &appsv1.Deployment{})
		return apierrors.IsNotFound(err), err
	})
	// Nothing deletes them; a while after the uninstall they are all still there, bound.
	time.Sleep(10 * time.Second)
	for _, pvc := range before.Items {
		var now corev1.PersistentVolumeClaim
		if err := env.c.Get(ctx, client.ObjectKeyFromObject(&pvc), &now); err != nil {
			t.Errorf("data PVC %s after helm uninstall: %v", pvc.Name, err)
		} else if now.UID != pvc.UID || now.DeletionTimestamp != nil || now.Status.Phase != corev1.ClaimBound {
			t.Errorf("data PVC %s after helm uninstall: uid %s (was %s), deleting %v, phase %s", pvc.Name, now.UID, pvc.UID,
				now.DeletionTimestamp != nil, now.Status.Phase)
		}
	}
	if err := env.c.Get(ctx, client.ObjectKeyFromObject(db), db); err != nil {
		t.Errorf("the Cluster after helm uninstall: %v", err)
	}
}

// helm runs the Helm client against the local cluster in the repository and returns its output,
// failing the test on an error.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := helmtest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, append(args, "--kubeconfig", env.kubeconfig)...)
	cmd.Dir, cmd.Env = env.root, helmtest.Env(t.TempDir())
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// replaceInstallWithHelm deletes the objects TestMain installed from config/default (those of
// dist/install.yaml), but for the kinds kept, so that Helm may create them as its own. At the
// test's end, the release is uninstalled if it is still there and config/default installed again
// for the tests that follow.
func replaceInstallWithHelm(t *testing.T, keep ...string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.root, "dist", "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var del bytes.Buffer
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var u unstructured.Unstructured
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		if len(u.Object) == 0 || slices.Contains(keep, u.GetKind()) {
			continue
		}
		fmt.Fprintf(&del, "---\n%s\n", doc)
	}
	t.Cleanup(func() {
		bin, err := helmtest.Binary()
		if err == nil {
			cmd := exec.Command(bin, "uninstall", release, "--namespace", operatorNamespace, "--ignore-not-found", "--wait",
				"--kubeconfig", env.kubeconfig)
			cmd.Env = helmtest.Env(t.TempDir())
			_ = cmd.Run()
		}
		if out, err := kubectl("apply", "--server-side", "--force-conflicts", "-k", filepath.Join(env.root, "config/default")); err != nil {
			t.Errorf("installing config/default again: %v\n%s", err, out)
			return
		}
		DeploymentAvailable(t, operatorNamespace, operatorDeployment, 3*time.Minute)
	})
	cmd := exec.Command(env.kubectl, "--kubeconfig", env.kubeconfig, "delete", "--ignore-not-found", "--wait", "-f", "-")
	cmd.Stdin = &del
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("removing the config/default install: %v\n%s", err, out)
	}
	WaitFor(t, 2*time.Minute, "the config/default operator's Pods gone", func() (bool, error) {
		var pods corev1.PodList
		if err := env.c.List(context.Background(), &pods, client.InNamespace(operatorNamespace),
			client.MatchingLabels{"app.kubernetes.io/name": "cloudnative-mysql"}); err != nil {
			return false, err
		}
		return len(pods.Items) == 0, fmt.Errorf("%d Pods left", len(pods.Items))
	})
}

// clusterRoleBindingManagedBy returns the app.kubernetes.io/managed-by label of a ClusterRoleBinding.
func clusterRoleBindingManagedBy(t *testing.T, name string) string {
	t.Helper()
	var b rbacv1.ClusterRoleBinding
	if err := env.c.Get(context.Background(), client.ObjectKey{Name: name}, &b); err != nil {
		t.Fatal(err)
	}
	return b.Labels["app.kubernetes.io/managed-by"]
}
