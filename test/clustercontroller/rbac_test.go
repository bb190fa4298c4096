package clustercontroller

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestInstanceServiceAccountPermissions asks the API server's authorizer what the first instance's
// own ServiceAccount (db-1, the primary) may do, as the Cluster controller made and bound it.
func TestInstanceServiceAccountPermissions(t *testing.T) {
	c := newCluster(t, 1, nil)
	ns := c.Namespace
	for _, tc := range []struct {
		rule                             string
		group, resource, sub, name, verb string
		allowed                          bool
	}{
		{"read its Cluster", "mysql.cloudnative-mysql.io", "clusters", "", "db", "get", true},
		{"never watch Clusters", "mysql.cloudnative-mysql.io", "clusters", "", "", "watch", false},
		{"read the root password (the manager logs in as root and sets it)", "", "secrets", "", "db-root", "get", true},
		{"never another Cluster's root password", "", "secrets", "", "other-root", "get", false},
		{"write its Cluster's status", "mysql.cloudnative-mysql.io", "clusters", "status", "db", "patch", true},
		{"never its Cluster's spec", "mysql.cloudnative-mysql.io", "clusters", "", "db", "patch", false},
		{"never another Cluster's status", "mysql.cloudnative-mysql.io", "clusters", "status", "other", "patch", false},
		{"renew the primary Lease", "coordination.k8s.io", "leases", "", "db-primary", "update", true},
		{"never another Lease", "coordination.k8s.io", "leases", "", "other", "update", false},
		{"read the replication password", "", "secrets", "", "db-replication", "get", true},
		{"never the CA key", "", "secrets", "", "db-ca", "get", false},
		{"read its instances' Pods", "", "pods", "", "db-1", "get", true},
		{"never another Pod of the namespace", "", "pods", "", "web-7c9f", "get", false},
		{"record Events (the archiver's), as the primary", "", "events", "", "", "create", true},
	} {
		checkAllowed(t, ns, tc.rule, tc.group, tc.resource, tc.sub, tc.name, tc.verb, tc.allowed)
	}
}

// checkAllowed waits until the authorizer answers allowed for the first instance's ServiceAccount
// "db-1".
func checkAllowed(t *testing.T, ns, rule, group, resource, sub, name, verb string, allowed bool) {
	t.Helper()
	user := "system:serviceaccount:" + ns + ":db-1"
	check.Eventually(t, waitTimeout, rule, func(ctx context.Context) (bool, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Group: group,
				Resource: resource, Subresource: sub, Name: name, Verb: verb}}}
		if err := kc.Create(ctx, sar); err != nil {
			return false, err
		}
		return sar.Status.Allowed == allowed, nil
	})
}

// TestRecoveryInstancePermissions: the first instance of a Cluster recovered from a Backup may
// read that Backup and the object store Secrets it recorded, once it exists, and nothing more.
func TestRecoveryInstancePermissions(t *testing.T) {
	c := newCluster(t, 1, func(c *v1.Cluster) {
		c.Spec.Bootstrap = &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{Backup: &v1.LocalObjectReference{Name: "nightly"}}}
	})
	ns := c.Namespace
	group := v1.GroupVersion.Group
	checkAllowed(t, ns, "read the recovery's Backup", group, "backups", "", "nightly", "get", true)
	checkAllowed(t, ns, "never another Backup", group, "backups", "", "other", "get", false)
	checkAllowed(t, ns, "no store Secret before the Backup exists", "", "secrets", "", "s3-old", "get", false)
	b := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "old"}}}
	check.Must(t, kc.Create(t.Context(), b))
	b.Status = v1.BackupStatus{Phase: v1.BackupPhaseCompleted, DestinationPath: "p/old/nightly/1/",
		ObjectStore: &v1.ObjectStoreConfiguration{Bucket: "backups", Credentials: v1.S3Credentials{
			AccessKeyID:     v1.SecretKeySelector{Name: "s3-old", Key: "id"},
			SecretAccessKey: v1.SecretKeySelector{Name: "s3-old", Key: "secret"}}}}
	check.Must(t, kc.Status().Update(t.Context(), b))
	checkAllowed(t, ns, "read the store Secret the Backup recorded", "", "secrets", "", "s3-old", "get", true)
	checkAllowed(t, ns, "never another Secret", "", "secrets", "", "s3-new", "get", false)
	checkAllowed(t, ns, "never the CA key", "", "secrets", "", "db-ca", "get", false)
}
