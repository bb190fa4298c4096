package manifests_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/cluster"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// watchedNamespaces reads --watch-namespaces from the installed Deployment.
func watchedNamespaces(t *testing.T, env *kubetest.Env) []string {
	t.Helper()
	var dep appsv1.Deployment
	check.Must(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: operatorNamespace, Name: "cloudnative-mysql-manager"}, &dep))
	for _, arg := range dep.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(arg, "--watch-namespaces="); ok {
			return strings.Split(v, ",")
		}
	}
	t.Fatalf("the Deployment of config/namespaced has no --watch-namespaces: %v", dep.Spec.Template.Spec.Containers[0].Args)
	return nil
}

func createNamespace(t *testing.T, env *kubetest.Env, name string) {
	t.Helper()
	check.Must(t, env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
}

// TestNamespacedInstall installs config/namespaced, grants the operator its watched namespace
// with config/namespaced/watched_namespace.yaml, and runs the operator's manager as its
// ServiceAccount, watching the namespaces the Deployment names. It reconciles a Cluster there,
// ignores one in another namespace, holds in its cache only the objects it labels, and still
// sees an unlabelled object that takes a name it needs.
func TestNamespacedInstall(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	k := newKubectl(t, env)
	k.must("apply", "--server-side", "--force-conflicts", "-k", "config/namespaced")
	namespaces := watchedNamespaces(t, env)
	watched := namespaces[0]
	createNamespace(t, env, watched)
	k.must("apply", "-n", watched, "-f", "config/namespaced/watched_namespace.yaml")
	outside := env.NewNamespace(t)
	ctx := context.Background()

	// Nothing is granted cluster-wide: outside the watched namespaces the operator may do what
	// any authenticated user may.
	comparePermissions(t, "operator-outside-watched-namespaces.permissions", permissions(k, operatorAccount, outside))

	// Objects the operator did not make, before it starts: an unlabelled Pod, and an unlabelled
	// ServiceAccount with the name an instance of a Cluster needs.
	stranger := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: watched, Name: "stranger"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	check.Must(t, env.Client.Create(ctx, stranger))
	check.Must(t, env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: watched, Name: "taken-1"}}))

	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: operatorAccount}
	mgr, err := operator.NewManager(cfg, operator.Options{Namespaces: namespaces, MetricsBindAddress: "0",
		HealthProbeBindAddress: "0", LeaderElection: true, LeaderElectionNamespace: operatorNamespace})
	check.Must(t, err)
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the operator stopped with %v", err)
		}
	})

	in := testCluster(t, env, watched, "db")
	out := testCluster(t, env, outside, "db")
	taken := testCluster(t, env, watched, "taken")
	backup := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: watched, Name: "b1"},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "db"}}}
	check.Must(t, env.Client.Create(ctx, backup))
	// What the Cluster controller makes, each with the operator's own permissions.
	for _, o := range []client.Object{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "db-1"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "db"}}, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "db"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "db.primary"}}, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "db.primary"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-replication"}},
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "db-1"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-1"}}, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db-rw"}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db"}}} {
		check.Eventually(t, time.Minute, fmt.Sprintf("the operator creates %T %s", o, o.GetName()), func(ctx context.Context) (bool, error) {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: watched, Name: o.GetName()}, o)
			return err == nil, client.IgnoreNotFound(err)
		})
	}
	check.Eventually(t, time.Minute, "the operator writes the Cluster's and the Backup's status", func(ctx context.Context) (bool, error) {
		var c v1.Cluster
		var b v1.Backup
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(in), &c); err != nil {
			return false, err
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(backup), &b); err != nil {
			return false, err
		}
		return c.Status.TargetPrimary == "db-1" && b.Status.Phase != "", nil
	})
	check.Eventually(t, time.Minute, "an unlabelled ServiceAccount of the name an instance needs is seen and refused", func(ctx context.Context) (bool, error) {
		var c v1.Cluster
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(taken), &c); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(c.Status.Conditions, cluster.ConditionOwnershipConflict)
		return cond != nil && strings.Contains(cond.Message, "ServiceAccount taken-1"), nil
	})
	var sa corev1.ServiceAccount
	check.Must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: watched, Name: "taken-1"}, &sa))
	if len(sa.OwnerReferences) != 0 {
		t.Errorf("the operator took over the ServiceAccount taken-1: %v", sa.OwnerReferences)
	}
	var pod corev1.Pod
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: watched, Name: "taken-1"}, &pod); !apierrors.IsNotFound(err) {
		t.Errorf("a Pod taken-1 runs as a ServiceAccount the Cluster does not control: %v", err)
	}

	// The cache holds the operator's Pods only.
	var pods corev1.PodList
	check.Must(t, mgr.GetCache().List(ctx, &pods, client.InNamespace(watched)))
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
		if len(p.ManagedFields) != 0 {
			t.Errorf("the cached Pod %s keeps its managedFields", p.Name)
		}
	}
	if !slices.Contains(names, "db-1") || slices.Contains(names, "stranger") {
		t.Errorf("the cache holds the Pods %v; want db-1 and not the unlabelled stranger", names)
	}

	// The Cluster outside was never touched: no status, no ServiceAccount, no Pod.
	time.Sleep(3 * time.Second)
	var c v1.Cluster
	check.Must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(out), &c))
	if c.Status.TargetPrimary != "" || c.Status.ObservedGeneration != 0 {
		t.Errorf("the Cluster outside the watched namespaces was reconciled: %+v", c.Status)
	}
	for _, o := range []client.Object{&corev1.ServiceAccount{}, &corev1.Pod{}} {
		name := "db-1" // the first instance's Pod, and the ServiceAccount it runs as
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: outside, Name: name}, o); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s exists outside the watched namespaces (err %v)", o, name, err)
		}
	}
}
