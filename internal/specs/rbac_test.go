package specs

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestBuildInstanceRBAC(t *testing.T) {
	c := testCluster()
	c.Spec.Backup = &mysqlv1alpha1.BackupConfiguration{ObjectStore: &mysqlv1alpha1.ObjectStoreConfiguration{Bucket: "b",
		Credentials: mysqlv1alpha1.S3Credentials{AccessKeyID: mysqlv1alpha1.SecretKeySelector{Name: "s3", Key: "id"},
			SecretAccessKey: mysqlv1alpha1.SecretKeySelector{Name: "s3", Key: "key"}}}}
	sa := BuildServiceAccount(c, "db-2")
	role, primaryRole := BuildRole(c, []string{"db-2", "db-1", "db-2"}), BuildPrimaryRole(c)
	binding, primaryBinding := BuildRoleBinding(c, []string{"db-2", "db-1", ""}), BuildPrimaryRoleBinding(c, []string{"db-2"})
	allowsIn := func(role *rbacv1.Role, group, resource, name, verb string) bool {
		return slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) &&
				(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, name))
		})
	}
	allows := func(group, resource, name, verb string) bool { return allowsIn(role, group, resource, name, verb) }
	subjects := func(b *rbacv1.RoleBinding) []string {
		var out []string
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == "ns" {
				out = append(out, s.Name)
			}
		}
		return out
	}
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"each instance has its own ServiceAccount, named after its Pod and owned", sa.Name == "db-2" && ownedByCluster(sa.ObjectMeta)},
		{"the Roles and bindings are named after the Cluster and owned", role.Name == "db" && binding.Name == "db" &&
			primaryRole.Name == "db.primary" && primaryBinding.Name == "db.primary" && ownedByCluster(role.ObjectMeta) &&
			ownedByCluster(binding.ObjectMeta) && ownedByCluster(primaryRole.ObjectMeta) && ownedByCluster(primaryBinding.ObjectMeta)},
		{"every instance's account is bound to the instances' Role, each once", binding.RoleRef.Name == "db" && binding.RoleRef.Kind == "Role" &&
			slices.Equal(subjects(binding), []string{"db-1", "db-2"})},
		{"only the named account is bound to the primary's Role", primaryBinding.RoleRef.Name == "db.primary" &&
			slices.Equal(subjects(primaryBinding), []string{"db-2"})},
		{"no target: nobody is bound to the primary's Role", len(BuildPrimaryRoleBinding(c, nil).Subjects) == 0},
		{"instances read their Cluster", allows("mysql.cloudnative-mysql.io", "clusters", "db", "get")},
		{"but no other Cluster", !allows("mysql.cloudnative-mysql.io", "clusters", "other", "get")},
		{"and list none", !allows("mysql.cloudnative-mysql.io", "clusters", "", "list")},
		{"instances write their Cluster's status", allows("mysql.cloudnative-mysql.io", "clusters/status", "db", "patch")},
		{"but no other Cluster's status", !allows("mysql.cloudnative-mysql.io", "clusters/status", "other", "patch")},
		{"instances never write a Cluster's spec", !allows("mysql.cloudnative-mysql.io", "clusters", "db", "patch")},
		{"the primary Lease can be created, renewed and released", allows("coordination.k8s.io", "leases", "", "create") &&
			allows("coordination.k8s.io", "leases", "db-primary", "update") && allows("coordination.k8s.io", "leases", "db-primary", "delete")},
		{"no other Lease can be renewed", !allows("coordination.k8s.io", "leases", "other", "update")},
		{"no other Lease can be deleted", !allows("coordination.k8s.io", "leases", "other", "delete")},
		{"the primary Lease can be read", allows("coordination.k8s.io", "leases", "db-primary", "get")},
		{"the instances' Pods can be read (is the old primary's Pod gone?)", allows("", "pods", "db-1", "get") && allows("", "pods", "db-2", "get")},
		{"but no other Pod of the namespace", !allows("", "pods", "web-7c9f", "get") && !allows("", "pods", "db-3", "get")},
		{"with no instance, no Pod at all (an empty resourceNames would mean every Pod)",
			!allowsIn(BuildRole(c, nil), "", "pods", "web-7c9f", "get")},
		{"Pods are not changed", !allows("", "pods", "db-1", "delete") && !allows("", "pods", "db-1", "patch")},
		{"the replication and backup passwords can be read", allows("", "secrets", "db-replication", "get") &&
			allows("", "secrets", "db-backup", "get")},
		{"root's and the application's can be read (the first primary sets them, the manager logs in as root)",
			allows("", "secrets", "db-root", "get") && allows("", "secrets", "db-app", "get")},
		{"no other Secret of the namespace can be read", !allows("", "secrets", "other-root", "get")},
		{"the object store's Secrets are not every instance's", !allows("", "secrets", "s3", "get")},
		{"they are the primary's", allowsIn(primaryRole, "", "secrets", "s3", "get")},
		{"the primary's Role reads no other Secret", !allowsIn(primaryRole, "", "secrets", "db-ca", "get") &&
			!allowsIn(primaryRole, "", "secrets", "db-root", "get")},
		{"every instance records no Event", !allows("", "events", "", "create")},
		{"the primary records its archiver's Events", allowsIn(primaryRole, "", "events", "", "create")},
		{"the CA key cannot be read", !allows("", "secrets", "db-ca", "get")},
	} {
		if !tc.ok {
			t.Errorf("rule broken: %s", tc.rule)
		}
	}
}
