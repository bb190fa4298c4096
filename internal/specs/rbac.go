package specs

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// Each instance runs as its own ServiceAccount, named after its Pod: RBAC cannot tell apart Pods
// that share one, and what only the primary may do (read the object store's credentials) must be
// granted to the primary alone. Two Roles:
//   - <cluster> (BuildRole), bound to every instance's ServiceAccount: what any instance does;
//   - <cluster>.primary (BuildPrimaryRole), bound to the target primary's ServiceAccount only, and
//     re-bound when the target changes: the object store's Secrets (its binlog archiver) and the
//     Events it records, and with bootstrap.recovery what the first instance restores from.

// InstanceServiceAccountName is the ServiceAccount an instance's Pod runs as: its own, named
// after the Pod.
func InstanceServiceAccountName(instance string) string { return instance }

// SharedServiceAccountName is the ServiceAccount every instance of a Cluster ran as before each
// had its own. A Pod that still runs as it (created by an earlier operator, until the rolling
// update replaces it) keeps its permissions: the bindings name the account each Pod runs as.
func SharedServiceAccountName(cluster string) string { return cluster }

// RoleName is the Role (and RoleBinding) granting what every instance of a Cluster does.
func RoleName(cluster string) string { return cluster }

// PrimaryRoleName is the Role (and RoleBinding) granting what only the target primary does. The
// dot keeps it apart from every name derived from another Cluster's (a Cluster name has none):
// <cluster>-primary would be the Role of a Cluster named so.
func PrimaryRoleName(cluster string) string { return cluster + ".primary" }

// PrimaryLeaseName is the coordination.k8s.io Lease the primary holds.
func PrimaryLeaseName(cluster string) string { return cluster + "-primary" }

// BuildServiceAccount returns instance's ServiceAccount.
func BuildServiceAccount(c *mysqlv1alpha1.Cluster, instance string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: objectMeta(c, InstanceServiceAccountName(instance))}
}

// InstanceSecretUsers are the accounts whose password Secret an instance manager reads from the
// API server (specs.UserSecretName): the replication and clone donor accounts, root's (the
// manager connects as root over the socket and sets it at bootstrap) and the application owner's
// (created at bootstrap).
var InstanceSecretUsers = Users

// BuildRole returns what every instance manager may do, and nothing more; every rule but the
// Lease's create and the EndpointSlices' list is restricted to named objects:
//   - read its own Cluster (the role passes, the bootstrap) and patch its status (currentPrimary,
//     divergedInstances; the ValidatingAdmissionPolicy of config/rbac keeps every other status
//     field out of its reach);
//   - hold the primary Lease <cluster>-primary: get, update (renew), patch, delete (release). Kubernetes
//     does not check resourceNames on create, so create is granted on every name and the
//     ValidatingAdmissionPolicy of config/rbac refuses any other name for these ServiceAccounts;
//   - read the password Secrets of InstanceSecretUsers;
//   - read the Pods of instances (a switchover target whose old primary does not answer, with the
//     Lease disabled, promotes only once that primary's Pod is gone): pods names the instances
//     and the primaries the status names (one whose PVC is gone is still asked about, and must be
//     found gone, not forbidden); no other Pod of the namespace. With no name there is no Pod rule
//     (an empty resourceNames would mean all);
//   - list EndpointSlices: whether a write Service still routes to a demoted instance
//     (instance.WriteRoutes). A list cannot be restricted by name.
func BuildRole(c *mysqlv1alpha1.Cluster, pods []string) *rbacv1.Role {
	secrets := make([]string, 0, len(InstanceSecretUsers))
	for _, u := range InstanceSecretUsers {
		secrets = append(secrets, UserSecretName(c.Name, u))
	}
	group := mysqlv1alpha1.GroupVersion.Group
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{group}, Resources: []string{"clusters"}, ResourceNames: []string{c.Name}, Verbs: []string{"get", "watch"}},
		{APIGroups: []string{group}, Resources: []string{"clusters/status"}, ResourceNames: []string{c.Name}, Verbs: []string{"patch"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{PrimaryLeaseName(c.Name)},
			Verbs: []string{"get", "update", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: secrets, Verbs: []string{"get"}},
	}
	if pods := sortedUnique(pods); len(pods) > 0 {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: pods, Verbs: []string{"get"}})
	}
	rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list"}})
	return &rbacv1.Role{ObjectMeta: objectMeta(c, RoleName(c.Name)), Rules: rules}
}

// BuildPrimaryRole returns what only the target primary's instance manager may do:
//   - read the object store's Secrets (its binlog archiver uploads the binary logs);
//   - create Events (the archiver's, a restore's; Kubernetes does not check resourceNames on
//     create);
//   - with bootstrap.recovery: read the Backup it names and the recoverySecrets
//     (RecoverySecretNames) of the object store it restores from (the first instance, the
//     target primary, restores).
func BuildPrimaryRole(c *mysqlv1alpha1.Cluster, recoverySecrets ...string) *rbacv1.Role {
	var rules []rbacv1.PolicyRule
	if secrets := objectStoreSecrets(c); len(secrets) > 0 {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: secrets, Verbs: []string{"get"}})
	}
	rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}})
	rules = append(rules, recoveryRules(c, recoverySecrets)...)
	return &rbacv1.Role{ObjectMeta: objectMeta(c, PrimaryRoleName(c.Name)), Rules: rules}
}

// objectStoreSecrets names the Secrets of the Cluster's object store, which the primary's binlog
// archiver reads.
func objectStoreSecrets(c *mysqlv1alpha1.Cluster) []string {
	if c.Spec.Backup == nil {
		return nil
	}
	return objectStoreSecretNames(c.Spec.Backup.ObjectStore)
}

// BuildRoleBinding binds the Role of every instance to accounts (the ServiceAccounts the
// instances' Pods run as).
func BuildRoleBinding(c *mysqlv1alpha1.Cluster, accounts []string) *rbacv1.RoleBinding {
	return roleBinding(c, RoleName(c.Name), accounts)
}

// BuildPrimaryRoleBinding binds the primary's Role to accounts: the ServiceAccount the target
// primary's Pod runs as, none while there is no target.
func BuildPrimaryRoleBinding(c *mysqlv1alpha1.Cluster, accounts []string) *rbacv1.RoleBinding {
	return roleBinding(c, PrimaryRoleName(c.Name), accounts)
}

func roleBinding(c *mysqlv1alpha1.Cluster, role string, accounts []string) *rbacv1.RoleBinding {
	b := &rbacv1.RoleBinding{
		ObjectMeta: objectMeta(c, role),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
	}
	for _, a := range sortedUnique(accounts) {
		b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: a, Namespace: c.Namespace})
	}
	return b
}

// sortedUnique returns the non-empty names of in, sorted, each once.
func sortedUnique(in []string) []string {
	out := slices.DeleteFunc(slices.Clone(in), func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}
