package clustercontroller

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestInstanceServiceAccountPermissions asks the API server's authorizer what the instance Pods'
// ServiceAccount may do.
func TestInstanceServiceAccountPermissions(t *testing.T) {
	c := newCluster(t, 1, nil)
	ns := c.Namespace
	user := "system:serviceaccount:" + ns + ":db"
	for _, tc := range []struct {
		rule                             string
		group, resource, sub, name, verb string
		allowed                          bool
	}{
		{"read its Cluster", "mysql.cloudnative-mysql.io", "clusters", "", "db", "get", true},
		{"never watch Clusters", "mysql.cloudnative-mysql.io", "clusters", "", "", "watch", false},
		{"never the root password", "", "secrets", "", "db-root", "get", false},
		{"write its Cluster's status", "mysql.cloudnative-mysql.io", "clusters", "status", "db", "patch", true},
		{"never its Cluster's spec", "mysql.cloudnative-mysql.io", "clusters", "", "db", "patch", false},
		{"never another Cluster's status", "mysql.cloudnative-mysql.io", "clusters", "status", "other", "patch", false},
		{"renew the primary Lease", "coordination.k8s.io", "leases", "", "db-primary", "update", true},
		{"never another Lease", "coordination.k8s.io", "leases", "", "other", "update", false},
		{"read the replication password", "", "secrets", "", "db-replication", "get", true},
		{"never the CA key", "", "secrets", "", "db-ca", "get", false},
	} {
		check.Eventually(t, waitTimeout, tc.rule, func(ctx context.Context) (bool, error) {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Group: tc.group,
					Resource: tc.resource, Subresource: tc.sub, Name: tc.name, Verb: tc.verb}}}
			if err := kc.Create(ctx, sar); err != nil {
				return false, err
			}
			return sar.Status.Allowed == tc.allowed, nil
		})
	}
}
