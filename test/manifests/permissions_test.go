package manifests_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

var updatePermissions = flag.Bool("update-permissions", false,
	"rewrite testdata/*.permissions with what the API server answers (then review the diff)")

// Identities of the install.
const (
	operatorNamespace = "cloudnative-mysql-system"
	operatorAccount   = "system:serviceaccount:" + operatorNamespace + ":cloudnative-mysql-manager"
)

func newKubectl(t *testing.T, env *kubetest.Env) kubectl {
	t.Helper()
	assets, err := kubetest.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	return kubectl{t: t, bin: filepath.Join(assets, "kubectl"), kubeconfig: env.KubeconfigFile(t)}
}

// testCluster creates a minimal Cluster.
func testCluster(t *testing.T, env *kubetest.Env, ns, name string) *v1.Cluster {
	t.Helper()
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.ClusterSpec{Instances: 1, MaxSwitchoverDelay: 3600, ImageName: "mysql:test", Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")}}}
	if err := env.Client.Create(context.Background(), c); err != nil {
		t.Fatalf("creating Cluster %s: %v", name, err)
	}
	return c
}

// createInstanceRBAC creates the instances' RBAC as the operator builds it for three instances
// <c>-1..3 with <c>-1 the target primary, and as it keeps it for Pods an earlier operator created:
// the shared ServiceAccount <c> bound to both Roles (a Pod of it may be the primary).
func createInstanceRBAC(t *testing.T, env *kubetest.Env, c *v1.Cluster) {
	t.Helper()
	instances := []string{specs.InstanceName(c.Name, 1), specs.InstanceName(c.Name, 2), specs.InstanceName(c.Name, 3)}
	shared := specs.SharedServiceAccountName(c.Name)
	objs := []client.Object{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: shared, Namespace: c.Namespace}}}
	for _, in := range instances {
		objs = append(objs, specs.BuildServiceAccount(c, in))
	}
	objs = append(objs, specs.BuildRole(c, instances), specs.BuildPrimaryRole(c),
		specs.BuildRoleBinding(c, append([]string{shared}, instances...)), specs.BuildPrimaryRoleBinding(c, []string{shared, instances[0]}))
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating the instances' %T %s: %v", o, o.GetName(), err)
		}
	}
}

var spaces = regexp.MustCompile(`\s+`)

// permissions is `kubectl auth can-i --list` as user in ns: one rule per line, columns separated
// by one space, the namespace written <namespace>.
func permissions(k kubectl, user, ns string) string {
	out := k.must("auth", "can-i", "--list", "--as="+user, "-n", ns)
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		lines = append(lines, strings.ReplaceAll(spaces.ReplaceAllString(strings.TrimSpace(line), " "), ns, "<namespace>"))
	}
	return strings.Join(lines, "\n") + "\n"
}

// comparePermissions compares what the API server grants with the reviewed list in testdata.
func comparePermissions(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *updatePermissions {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the reviewed permissions: %v", err)
	}
	if got != string(want) {
		t.Errorf("the effective permissions differ from the reviewed %s (review, then go test -run %s -update-permissions):\n--- got\n%s--- want\n%s",
			path, t.Name(), got, want)
	}
}

// TestEffectivePermissions installs config/default and the instances' RBAC as the operator builds
// it, and compares what the API server's authorizer grants the operator's and a Cluster's
// instances' ServiceAccounts with the reviewed lists in testdata.
func TestEffectivePermissions(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	k := newKubectl(t, env)
	k.must("apply", "--server-side", "--force-conflicts", "-k", "config/default")
	ns := env.NewNamespace(t)
	c := testCluster(t, env, ns, "db")
	// An object store, whose Secret only the primary reads.
	c.Spec.Backup = &v1.BackupConfiguration{ObjectStore: &v1.ObjectStoreConfiguration{Bucket: "backups", Endpoint: "https://s3.example.com",
		Credentials: v1.S3Credentials{AccessKeyID: v1.SecretKeySelector{Name: "s3-creds", Key: "id"},
			SecretAccessKey: v1.SecretKeySelector{Name: "s3-creds", Key: "key"}}}}
	if err := env.Client.Update(context.Background(), c); err != nil {
		t.Fatalf("giving Cluster db an object store: %v", err)
	}
	createInstanceRBAC(t, env, c)

	comparePermissions(t, "operator.permissions", permissions(k, operatorAccount, ns))
	comparePermissions(t, "instance.permissions", permissions(k, "system:serviceaccount:"+ns+":db-2", ns))
	comparePermissions(t, "instance-primary.permissions", permissions(k, "system:serviceaccount:"+ns+":db-1", ns))
}
