package cluster

// Permissions the Cluster controller needs beyond internal/operator/rbac.go: the instance Pods'
// ServiceAccount, Role and RoleBinding, applied (create, patch) and watched; garbage collection
// deletes them with the Cluster. Granting that Role requires holding its rules, which the
// operator does (clusters, clusters/status, leases, secrets, pods).
//
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;patch
