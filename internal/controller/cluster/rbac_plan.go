package cluster

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// planRBAC decides each instance's ServiceAccount, the two Roles and their bindings
// (internal/specs/rbac.go): every instance's account is bound to the Role of all instances, and
// only the target primary's to the primary's Role, so a change of target (a switchover, a
// failover naming a candidate) re-binds it in the reconcile that names it, before the status
// does. A binding names the account each Pod actually runs as: a Pod created before each
// instance had its own account runs as the Cluster's shared one until the rolling update
// replaces it, and keeps its permissions meanwhile.
func (d *Decision) planRBAC(c *v1.Cluster, o Observation) {
	instances := slices.Clone(d.Instances)
	for _, p := range d.CreatePods {
		instances = append(instances, p.Name)
	}
	slices.Sort(instances)
	instances = slices.Compact(instances)
	runsAs := map[string]string{}
	for _, p := range o.Pods {
		runsAs[p.Name] = p.Spec.ServiceAccountName
	}
	account := func(instance string) string {
		if a := runsAs[instance]; a == specs.SharedServiceAccountName(c.Name) {
			return a
		}
		return specs.InstanceServiceAccountName(instance)
	}
	var all, primary []string
	for _, in := range instances {
		d.ServiceAccounts = append(d.ServiceAccounts, specs.BuildServiceAccount(c, in))
		all = append(all, account(in))
	}
	if t := d.Status.TargetPrimary; t != "" && slices.Contains(instances, t) {
		primary = []string{account(t)}
	}
	d.Roles = []*rbacv1.Role{specs.BuildRole(c, instances), specs.BuildPrimaryRole(c, specs.RecoverySecretNames(c, o.RecoveryBackup)...)}
	d.RoleBindings = []*rbacv1.RoleBinding{specs.BuildRoleBinding(c, all), specs.BuildPrimaryRoleBinding(c, primary)}
}
