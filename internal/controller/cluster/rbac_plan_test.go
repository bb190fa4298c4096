package cluster

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestPlanRBAC: one row per rule of planRBAC.
func TestPlanRBAC(t *testing.T) {
	subjects := func(bindings []*rbacv1.RoleBinding, name string) []string {
		for _, b := range bindings {
			if b.Name != name {
				continue
			}
			var out []string
			for _, s := range b.Subjects {
				out = append(out, s.Name)
			}
			return out
		}
		t.Fatalf("no RoleBinding %s", name)
		return nil
	}
	sharedPod := func(w *world, pod string) *world {
		for i := range w.o.Pods {
			if w.o.Pods[i].Name == pod {
				w.o.Pods[i].Spec.ServiceAccountName = "db"
			}
		}
		return w
	}
	three := func() *world { return newWorld(3).instance(1, true).instance(2, true).instance(3, true) }
	t.Run("the primaries the status names stay readable by name, instances or not, and no other Pod", func(t *testing.T) {
		w := three().primary("db-1", "db-2").status(func(st *v1.ClusterStatus) { st.CurrentPrimary, st.FailingPrimary = "db-7", "web-7c9f" })
		d := w.decide()
		var pods []string
		for _, r := range d.Roles[0].Rules {
			if slices.Contains(r.Resources, "pods") {
				pods = r.ResourceNames
			}
		}
		if want := []string{"db-1", "db-2", "db-3", "db-7"}; !slices.Equal(pods, want) {
			t.Errorf("Pods readable %v, want %v", pods, want)
		}
	})
	for _, tc := range []struct {
		rule              string
		world             *world
		accounts, all, pr []string
	}{
		{"each instance has its own account, bound to the instances' Role; the target's alone to the primary's",
			three().primary("db-1", "db-1"), []string{"db-1", "db-2", "db-3"}, []string{"db-1", "db-2", "db-3"}, []string{"db-1"}},
		{"a switchover's target is bound to the primary's Role as soon as it is named",
			three().primary("db-1", "db-3"), []string{"db-1", "db-2", "db-3"}, []string{"db-1", "db-2", "db-3"}, []string{"db-3"}},
		{"a Pod an earlier operator created keeps the shared account bound, as the primary too",
			sharedPod(three().primary("db-1", "db-1"), "db-1"), []string{"db-1", "db-2", "db-3"}, []string{"db", "db-2", "db-3"}, []string{"db"}},
		{"the first instance is bound before its Pod is created, as the target it is named",
			newWorld(1), []string{"db-1"}, []string{"db-1"}, []string{"db-1"}},
	} {
		d := tc.world.decide()
		var accounts []string
		for _, sa := range d.ServiceAccounts {
			accounts = append(accounts, sa.Name)
		}
		if !slices.Equal(accounts, tc.accounts) {
			t.Errorf("%s: ServiceAccounts %v, want %v", tc.rule, accounts, tc.accounts)
		}
		if got := subjects(d.RoleBindings, "db"); !slices.Equal(got, tc.all) {
			t.Errorf("%s: bound to the instances' Role %v, want %v", tc.rule, got, tc.all)
		}
		if got := subjects(d.RoleBindings, "db.primary"); !slices.Equal(got, tc.pr) {
			t.Errorf("%s: bound to the primary's Role %v, want %v", tc.rule, got, tc.pr)
		}
	}
}
