package specs

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// ServiceAccountName is the ServiceAccount the instance Pods run as; the Role and RoleBinding
// granting its permissions share the name.
func ServiceAccountName(cluster string) string { return cluster }

// PrimaryLeaseName is the coordination.k8s.io Lease the primary holds.
func PrimaryLeaseName(cluster string) string { return cluster + "-primary" }

// BuildServiceAccount returns the instance Pods' ServiceAccount.
func BuildServiceAccount(c *mysqlv1alpha1.Cluster) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: objectMeta(c, ServiceAccountName(c.Name))}
}

// InstanceSecretUsers are the accounts whose password Secret an instance manager reads from the
// API server (specs.UserSecretName): the replication and clone donor accounts, root's (the
// manager connects as root over the socket and sets it at bootstrap) and the application owner's
// (created at bootstrap).
var InstanceSecretUsers = Users

// BuildRole returns what an instance manager may do, and nothing more; every rule but the Lease's
// create and the Pods' get is restricted to named objects:
//   - read its own Cluster (the role passes, the bootstrap) and patch its status (currentPrimary,
//     divergedInstances; the ValidatingAdmissionPolicy of config/rbac keeps every other status
//     field out of its reach);
//   - hold the primary Lease <cluster>-primary: get, update (renew), patch, delete (release). Kubernetes
//     does not check resourceNames on create, so create is granted on every name and the
//     ValidatingAdmissionPolicy of config/rbac refuses any other name for this ServiceAccount;
//   - read the password Secrets of InstanceSecretUsers, and the object store's Secrets (the binlog
//     archiver of the primary);
//   - read Pods (a switchover target whose old primary does not answer, with the Lease disabled,
//     promotes only once that primary's Pod is gone);
//   - with bootstrap.recovery: read the Backup it names and the recoverySecrets
//     (RecoverySecretNames) of the object store it restores from, and record the restore's Events.
func BuildRole(c *mysqlv1alpha1.Cluster, recoverySecrets ...string) *rbacv1.Role {
	secrets := make([]string, 0, len(InstanceSecretUsers))
	for _, u := range InstanceSecretUsers {
		secrets = append(secrets, UserSecretName(c.Name, u))
	}
	secrets = append(secrets, objectStoreSecrets(c)...)
	group := mysqlv1alpha1.GroupVersion.Group
	return &rbacv1.Role{
		ObjectMeta: objectMeta(c, ServiceAccountName(c.Name)),
		Rules: append([]rbacv1.PolicyRule{
			{APIGroups: []string{group}, Resources: []string{"clusters"}, ResourceNames: []string{c.Name}, Verbs: []string{"get", "watch"}},
			{APIGroups: []string{group}, Resources: []string{"clusters/status"}, ResourceNames: []string{c.Name}, Verbs: []string{"patch"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{PrimaryLeaseName(c.Name)},
				Verbs: []string{"get", "update", "patch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: secrets, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
			// Whether a write Service still routes to a demoted instance (instance.WriteRoutes).
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list"}},
		}, recoveryRules(c, recoverySecrets)...),
	}
}

// objectStoreSecrets names the Secrets of the Cluster's object store, which the primary's binlog
// archiver reads.
func objectStoreSecrets(c *mysqlv1alpha1.Cluster) []string {
	if c.Spec.Backup == nil {
		return nil
	}
	return objectStoreSecretNames(c.Spec.Backup.ObjectStore)
}

// BuildRoleBinding binds the Role to the ServiceAccount.
func BuildRoleBinding(c *mysqlv1alpha1.Cluster) *rbacv1.RoleBinding {
	name := ServiceAccountName(c.Name)
	return &rbacv1.RoleBinding{
		ObjectMeta: objectMeta(c, name),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: c.Namespace}},
	}
}
