package specs

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// RecoverySecretNames are the Secrets the first instance of a Cluster with bootstrap.recovery
// reads to reach the backup: the credentials (and endpoint CA) of the source's object store, or
// of the object store the named Backup recorded (backup: that Backup, nil while it is unknown).
func RecoverySecretNames(c *mysqlv1alpha1.Cluster, backup *mysqlv1alpha1.Backup) []string {
	rec := c.Recovery()
	switch {
	case rec == nil:
		return nil
	case rec.Source != nil:
		return objectStoreSecretNames(&rec.Source.ObjectStore)
	case backup != nil && backup.Name == rec.BackupName():
		return objectStoreSecretNames(backup.Status.ObjectStore)
	}
	return nil
}

// objectStoreSecretNames are the Secrets an object store configuration references, sorted.
func objectStoreSecretNames(store *mysqlv1alpha1.ObjectStoreConfiguration) []string {
	if store == nil {
		return nil
	}
	creds := store.Credentials
	names := []string{creds.AccessKeyID.Name, creds.SecretAccessKey.Name}
	if creds.SessionToken != nil {
		names = append(names, creds.SessionToken.Name)
	}
	if store.EndpointCA != nil {
		names = append(names, store.EndpointCA.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// recoveryRules let the first instance (the target primary) read the Backup a recovery names and
// the Secrets of the object store it restores from.
func recoveryRules(c *mysqlv1alpha1.Cluster, secrets []string) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	if name := c.Recovery().BackupName(); name != "" {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{mysqlv1alpha1.GroupVersion.Group},
			Resources: []string{"backups"}, ResourceNames: []string{name}, Verbs: []string{"get"}})
	}
	if len(secrets) > 0 {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"},
			ResourceNames: secrets, Verbs: []string{"get"}})
	}
	// The restore's outcome (BackupRestored, RecoveryFailed) is recorded with the Events rule of
	// the primary's Role, which holds these rules.
	return rules
}
