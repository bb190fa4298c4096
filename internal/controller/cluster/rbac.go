package cluster

// Permissions the Cluster controller needs beyond internal/operator/rbac.go: the instances'
// ServiceAccounts, Roles and RoleBindings (planRBAC), applied (create, patch) and watched; garbage
// collection deletes them with the Cluster. Granting those Roles requires holding their rules,
// which the operator does (clusters, clusters/status, leases, secrets, pods, events, backups).
//
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;patch
