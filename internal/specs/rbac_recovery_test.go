package specs

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestRecoveryRBAC(t *testing.T) {
	store := func(id, secret string) mysqlv1alpha1.ObjectStoreConfiguration {
		return mysqlv1alpha1.ObjectStoreConfiguration{Bucket: "b", Credentials: mysqlv1alpha1.S3Credentials{
			AccessKeyID:     mysqlv1alpha1.SecretKeySelector{Name: id, Key: "id"},
			SecretAccessKey: mysqlv1alpha1.SecretKeySelector{Name: secret, Key: "key"}}}
	}
	withRecovery := func(rec *mysqlv1alpha1.BootstrapRecovery) *mysqlv1alpha1.Cluster {
		c := testCluster()
		c.Spec.Bootstrap = &mysqlv1alpha1.BootstrapConfiguration{Recovery: rec}
		return c
	}
	recorded := store("backup-creds", "backup-creds")
	named := &mysqlv1alpha1.Backup{Status: mysqlv1alpha1.BackupStatus{ObjectStore: &recorded}}
	named.Name = "nightly"
	other := named.DeepCopy()
	other.Name = "other"
	fromBackup := withRecovery(&mysqlv1alpha1.BootstrapRecovery{Backup: &mysqlv1alpha1.LocalObjectReference{Name: "nightly"}})
	fromSource := withRecovery(&mysqlv1alpha1.BootstrapRecovery{Source: &mysqlv1alpha1.RecoverySource{ClusterName: "old",
		ObjectStore: store("src-id", "src-secret")}})
	allows := func(role *rbacv1.Role, group, resource, name string) bool {
		return slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, "get") &&
				(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, name))
		})
	}
	role := func(c *mysqlv1alpha1.Cluster, b *mysqlv1alpha1.Backup) *rbacv1.Role {
		return BuildPrimaryRole(c, RecoverySecretNames(c, b)...)
	}
	group := mysqlv1alpha1.GroupVersion.Group
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"no recovery reads no Backup and no store Secret", !allows(role(testCluster(), nil), group, "backups", "nightly") &&
			!allows(role(testCluster(), nil), "", "secrets", "backup-creds")},
		{"a recovery from a Backup reads that Backup", allows(role(fromBackup, named), group, "backups", "nightly")},
		{"but no other Backup", !allows(role(fromBackup, named), group, "backups", "other")},
		{"and the Secrets the Backup recorded", allows(role(fromBackup, named), "", "secrets", "backup-creds")},
		{"the Secrets of another Backup are not granted", !allows(role(fromBackup, other), "", "secrets", "backup-creds")},
		{"a recovery from a source reads its credentials", allows(role(fromSource, nil), "", "secrets", "src-id") &&
			allows(role(fromSource, nil), "", "secrets", "src-secret")},
		{"and no Backup", !allows(role(fromSource, nil), group, "backups", "nightly")},
		{"the password Secrets are not the primary Role's (every instance's Role has them)", !allows(role(fromSource, nil), "", "secrets", "db-replication")},
		{"no other Secret becomes readable", !allows(role(fromSource, nil), "", "secrets", "db-ca")},
	} {
		if !tc.ok {
			t.Errorf("rule broken: %s", tc.rule)
		}
	}
}
