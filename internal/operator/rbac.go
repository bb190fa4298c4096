package operator

// The operator's permissions, rendered into config/rbac/role.yaml by controller-gen. Each line
// grants what a client call of the operator needs and no more; docs/security.md explains each.
// Secrets are read one by one from the API server (never listed or watched); the kinds a Cluster
// or a Backup owns are listed and watched through the label-selected cache (kit.CacheOptions).
// Leases: the leader election (get, create, update), the watch of primary Leases, and the verbs
// the instances' Role grants (a Role can only grant what its creator holds).
//
// +kubebuilder:rbac:groups=mysql.cloudnative-mysql.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=mysql.cloudnative-mysql.io,resources=backups,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=mysql.cloudnative-mysql.io,resources=scheduledbackups,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=mysql.cloudnative-mysql.io,resources=clusters/status;backups/status;scheduledbackups/status,verbs=patch
// +kubebuilder:rbac:groups=mysql.cloudnative-mysql.io,resources=clusters/finalizers;backups/finalizers;scheduledbackups/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods/resize,verbs=patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get
