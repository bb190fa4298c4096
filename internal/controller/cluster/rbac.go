package cluster

// Permissions the Cluster controller needs beyond internal/operator/rbac.go: the instance Pods'
// ServiceAccount, Role and RoleBinding. Granting that Role requires holding its rules, which the
// operator does (clusters, clusters/status, leases, secrets, events).
//
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch;delete
