package clustercontroller

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestCreationProducesTheSeedObjects applies a three-instance Cluster and checks that exactly the
// objects the spec describes exist, all owned by the Cluster, and the status and role Services.
func TestCreationProducesTheSeedObjects(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 3, nil)
	ns := c.Namespace
	check.Eventually(t, waitTimeout, "targetPrimary is the first instance", func(context.Context) (bool, error) {
		return getCluster(t, c).Status.TargetPrimary == "db-1", nil
	})
	setPrimary(t, c, "db-1")
	waitInstances(t, c, "db-1", "db-2", "db-3")
	check.Eventually(t, waitTimeout, "the Cluster is Ready", func(context.Context) (bool, error) {
		return meta.IsStatusConditionTrue(getCluster(t, c).Status.Conditions, v1.ConditionReady), nil
	})

	for _, tc := range []struct {
		rule string
		list client.ObjectList
		want []string
	}{
		{"one PVC per instance", &corev1.PersistentVolumeClaimList{}, []string{"db-1", "db-2", "db-3"}},
		{"per-instance headless Services and the rw, ro, r Services", &corev1.ServiceList{},
			[]string{"db-1", "db-2", "db-3", "db-r", "db-ro", "db-rw"}},
		{"user Secrets, the CA, client and server certificates, the metrics token", &corev1.SecretList{},
			[]string{"db-1-server-tls", "db-2-server-tls", "db-3-server-tls", "db-app", "db-backup", "db-ca", "db-fence", "db-metrics",
				"db-operator-client-tls", "db-replication", "db-replication-client-tls", "db-root"}},
	} {
		if got := names(t, ns, tc.list); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.rule, got, tc.want)
		}
	}
	for _, o := range []struct {
		obj  client.Object
		name string
	}{{&corev1.ServiceAccount{}, "db-1"}, {&rbacv1.Role{}, "db"}, {&rbacv1.RoleBinding{}, "db"},
		{&rbacv1.Role{}, "db.primary"}, {&rbacv1.RoleBinding{}, "db.primary"}} {
		if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.name}, o.obj); err != nil {
			t.Errorf("the instance's ServiceAccount, the Roles and their RoleBindings exist: %T %s: %v", o.obj, o.name, err)
		}
	}
	var pdb policyv1.PodDisruptionBudget
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &pdb); err != nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("a PodDisruptionBudget allows one disruption: %v %+v", err, pdb.Spec)
	}
	assertAllOwned(t, c)

	st := getCluster(t, c).Status
	if st.LatestGeneratedNode != 3 || st.Instances != 3 || st.ReadyInstances != 3 || st.CurrentPrimary != "db-1" ||
		st.TargetPrimaryTimestamp == nil || st.CurrentPrimaryTimestamp == nil {
		t.Errorf("status: %+v", st)
	}
	waitEndpoints(t, ns, map[string][]string{
		"db-rw": {"db-1"}, "db-ro": {"db-2", "db-3"}, "db-r": {"db-1", "db-2", "db-3"},
	})
	assertEvents(t, ns, "InstanceCreated", "TargetPrimarySet", "SecretCreated", "CertificateIssued", "ServiceCreated", "ClusterReady")
}

// assertAllOwned checks every child carries the Cluster as its controller owner.
func assertAllOwned(t *testing.T, c *v1.Cluster) {
	t.Helper()
	uid := getCluster(t, c).UID
	lists := []client.ObjectList{&corev1.PodList{}, &corev1.PersistentVolumeClaimList{}, &corev1.ServiceList{},
		&corev1.SecretList{}, &policyv1.PodDisruptionBudgetList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{}}
	for _, l := range lists {
		if err := kc.List(context.Background(), l, client.InNamespace(c.Namespace)); err != nil {
			t.Fatal(err)
		}
		items, _ := meta.ExtractList(l)
		for _, o := range items {
			obj := o.(client.Object)
			if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != uid {
				t.Errorf("%T %s is not controlled by the Cluster", obj, obj.GetName())
			}
			if obj.GetLabels()[v1.ClusterLabel] != "db" {
				t.Errorf("%T %s lacks the cluster label", obj, obj.GetName())
			}
		}
	}
}

// assertEvents checks that the Cluster recorded Events with each reason.
func assertEvents(t *testing.T, ns string, reasons ...string) {
	t.Helper()
	for _, r := range reasons {
		check.Eventually(t, waitTimeout, "an Event "+r, func(ctx context.Context) (bool, error) {
			var evs corev1.EventList
			err := kc.List(ctx, &evs, client.InNamespace(ns))
			return slices.ContainsFunc(evs.Items, func(e corev1.Event) bool {
				return e.Reason == r && e.InvolvedObject.Kind == "Cluster"
			}), err
		})
	}
}
