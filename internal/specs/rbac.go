package specs

import (
	"slices"

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

// BuildRole returns what an instance manager may do, and nothing more: read its Cluster and write
// its status (currentPrimary), hold the primary Lease, read the Cluster's password Secrets and object store Secrets (the binlog archiver) and
// instance Pods (a switchover target whose old primary does not answer, with the Lease disabled,
// promotes only once that primary's Pod is gone), and record Events. The Lease's create cannot be
// restricted to its name (Kubernetes does not check resourceNames on create); every other verb
// on Leases is.
func BuildRole(c *mysqlv1alpha1.Cluster) *rbacv1.Role {
	secrets := make([]string, 0, len(Users))
	for _, u := range Users {
		secrets = append(secrets, UserSecretName(c.Name, u))
	}
	secrets = append(secrets, objectStoreSecrets(c)...)
	group := mysqlv1alpha1.GroupVersion.Group
	return &rbacv1.Role{
		ObjectMeta: objectMeta(c, ServiceAccountName(c.Name)),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{group}, Resources: []string{"clusters"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{group}, Resources: []string{"clusters/status"}, ResourceNames: []string{c.Name},
				Verbs: []string{"get", "patch", "update"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{PrimaryLeaseName(c.Name)},
				Verbs: []string{"get", "watch", "update", "patch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: secrets, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		},
	}
}

// objectStoreSecrets names the Secrets of the Cluster's object store, which the primary's binlog
// archiver reads.
func objectStoreSecrets(c *mysqlv1alpha1.Cluster) []string {
	if c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil {
		return nil
	}
	store := c.Spec.Backup.ObjectStore
	names := []string{store.Credentials.AccessKeyID.Name, store.Credentials.SecretAccessKey.Name}
	if store.Credentials.SessionToken != nil {
		names = append(names, store.Credentials.SessionToken.Name)
	}
	if store.EndpointCA != nil {
		names = append(names, store.EndpointCA.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
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
