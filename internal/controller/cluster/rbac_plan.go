package cluster

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// planRBAC decides each instance's ServiceAccount, the two Roles and their bindings
// (internal/specs/rbac.go): every instance's account is bound to the Role of all instances, and
// only the target primary's to the primary's Role, re-bound in the reconcile that sees a new
// target: a failover's candidate before the status names it, a switchover's target (which the
// plugin writes into the status) in the reconcile that follows, while the old primary demotes. A binding names the account each Pod actually runs as: a Pod created before each
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
	// The primaries the status names are asked about by name (is the old primary's Pod gone?) even
	// when their PVC, and so their instance, is gone: a forbidden read would never say gone.
	// Only names of this Cluster's instances: whoever may patch the status must not open another
	// Pod of the namespace to them.
	pods := slices.Clone(instances)
	for _, name := range []string{d.Status.CurrentPrimary, d.Status.TargetPrimary, d.Status.FailingPrimary} {
		if _, ok := specs.InstanceSerial(c.Name, name); ok {
			pods = append(pods, name)
		}
	}
	d.Roles = []*rbacv1.Role{specs.BuildRole(c, pods), specs.BuildPrimaryRole(c, specs.RecoverySecretNames(c, o.RecoveryBackup)...)}
	d.RoleBindings = []*rbacv1.RoleBinding{specs.BuildRoleBinding(c, all), specs.BuildPrimaryRoleBinding(c, primary)}
}
