package specs

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestBuildInstanceRBAC(t *testing.T) {
	c := testCluster()
	sa, role, binding := BuildServiceAccount(c), BuildRole(c), BuildRoleBinding(c)
	allows := func(group, resource, name, verb string) bool {
		return slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) &&
				(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, name))
		})
	}
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"ServiceAccount, Role and RoleBinding are named after the Cluster and owned",
			sa.Name == "db" && role.Name == "db" && binding.Name == "db" && ownedByCluster(sa.ObjectMeta) &&
				ownedByCluster(role.ObjectMeta) && ownedByCluster(binding.ObjectMeta)},
		{"the binding ties the Role to the ServiceAccount", binding.RoleRef.Name == "db" && binding.RoleRef.Kind == "Role" &&
			binding.Subjects[0].Name == "db" && binding.Subjects[0].Namespace == "ns"},
		{"instances read their Cluster", allows("mysql.cloudnative-mysql.io", "clusters", "db", "get")},
		{"but no other Cluster", !allows("mysql.cloudnative-mysql.io", "clusters", "other", "get")},
		{"and list or watch none", !allows("mysql.cloudnative-mysql.io", "clusters", "", "list") &&
			!allows("mysql.cloudnative-mysql.io", "clusters", "", "watch")},
		{"instances write their Cluster's status", allows("mysql.cloudnative-mysql.io", "clusters/status", "db", "patch")},
		{"but no other Cluster's status", !allows("mysql.cloudnative-mysql.io", "clusters/status", "other", "patch")},
		{"instances never write a Cluster's spec", !allows("mysql.cloudnative-mysql.io", "clusters", "db", "patch")},
		{"the primary Lease can be created, renewed and released", allows("coordination.k8s.io", "leases", "", "create") &&
			allows("coordination.k8s.io", "leases", "db-primary", "update") && allows("coordination.k8s.io", "leases", "db-primary", "delete")},
		{"no other Lease can be renewed", !allows("coordination.k8s.io", "leases", "other", "update")},
		{"no other Lease can be deleted", !allows("coordination.k8s.io", "leases", "other", "delete")},
		{"the primary Lease can be read", allows("coordination.k8s.io", "leases", "db-primary", "get")},
		{"instance Pods can be read (is the old primary's Pod gone?)", allows("", "pods", "db-1", "get")},
		{"but not changed", !allows("", "pods", "db-1", "delete") && !allows("", "pods", "db-1", "patch")},
		{"the replication and backup passwords can be read", allows("", "secrets", "db-replication", "get") &&
			allows("", "secrets", "db-backup", "get")},
		{"root's and the application's can be read (the first primary sets them, the manager logs in as root)",
			allows("", "secrets", "db-root", "get") && allows("", "secrets", "db-app", "get")},
		{"no other Secret of the namespace can be read", !allows("", "secrets", "other-root", "get")},
		{"no Events are recorded", !allows("", "events", "", "create")},
		{"the CA key cannot be read", !allows("", "secrets", "db-ca", "get")},
	} {
		if !tc.ok {
			t.Errorf("rule broken: %s", tc.rule)
		}
	}
}
